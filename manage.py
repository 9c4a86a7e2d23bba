#!/usr/bin/env python
import os
import sys

if __name__ == "__main__":
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings")
    from django.core.management import execute_from_command_line

    from submissions.checking import startup  # the speed-ups below, and what each saves

    try:
        execute_from_command_line(sys.argv)
    finally:
        startup.freeze_at_exit()
