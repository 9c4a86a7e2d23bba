#!/usr/bin/env python
import gc
import os
import sys

if __name__ == "__main__":
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings")
    from django.core.management import execute_from_command_line

    try:
        execute_from_command_line(sys.argv)
    finally:
        # Python's exit collects every object left (Django, Celery: about 200,000) for a third of a second;
        # frozen, they are left to the OS. Files and connections are closed by `with` blocks, not at exit.
        gc.freeze()
