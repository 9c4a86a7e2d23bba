from django.apps import AppConfig
from django.db.backends.signals import connection_created


def _tune_sqlite(sender, connection, **kwargs):
    """Embedded mode: WAL lets the site read while a worker writes; NORMAL sync is safe with WAL."""
    if connection.vendor == "sqlite":
        with connection.cursor() as cursor:
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA synchronous=NORMAL")


class PortalConfig(AppConfig):
    name = "portal"

    def ready(self):
        connection_created.connect(_tune_sqlite)
        from . import checks  # noqa: F401 - registers the system checks
