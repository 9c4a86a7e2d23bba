"""Notifications: who is told of what (events.py), by mail, in the site and by Atom feeds."""
