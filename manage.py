#!/usr/bin/env python
import gc
import os
import sys

if __name__ == "__main__":
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings")
    from submissions import early_split

    early_split.start(sys.argv)  # `ingest ARCHIVE`: split it while Django starts
    from django.core.management import execute_from_command_line

    try:
        execute_from_command_line(sys.argv)
    finally:
        # Python's exit runs the cycle collector over every object left (Django, Celery: about 200,000), 0.2-0.3 s
        # of each command; frozen, they are passed over (reference counting still frees what it can).
        gc.freeze()
