"""The one patch the test session makes to Django: after each committing test the database is
emptied with DELETE, not TRUNCATE.

Why (issue 27, item 5: patch nothing of Django's unless the CI time it saves is measured): Django
empties the database after a `django_db(transaction=True)` test with one TRUNCATE of every table, and
PostgreSQL's TRUNCATE makes new files for each table however few rows it holds. Measured on this
machine (2 shared cores), ten files with 130 committing tests (test_bad_bundles, test_hostile_input,
test_pipeline, test_validation, test_pages, test_upload_edges, test_publication, test_log_viewer,
test_hostile_outputs, test_uploads), both ways in one session, twice:

    TRUNCATE (Django's own)   1.49 s and 1.59 s a test   whole run 312 s and 336 s
    DELETE (this module)      0.30 s and 0.27 s a test   whole run 158 s and 161 s

About 1.2 s saved per committing test: some four minutes of the suite's ~200 committing tests in
every CI run. Measured by timing `call_command("flush")` in django.test.testcases, with and
without this fixture, the two ways alternated on the same files.

How: foreign keys are checked at commit (Django declares them DEFERRABLE INITIALLY DEFERRED), so the
order of the DELETEs does not matter. Audit events refuse DELETE
(audit/migrations/0002_append_only_trigger.py): that table is still truncated, when it has rows.
With reset_sequences or allow_cascade the flush is Django's own.

DELETE takes row locks, where TRUNCATE waited for the whole table: a module's shared Celery worker still
finishing a task when its test ends can deadlock with the flush (notifications.deliver updating the Outbox
row the flush deletes), or commit a row the flush did not see that refers to one it deletes (a
Notification of a user), and PostgreSQL ends the flush. A flush ended so is run again (at most FLUSH_TRIES
times), once the worker's transaction is through: it deletes that row too.
"""

import pytest

FLUSH_TRIES = 3
# PostgreSQL's deadlock_detected, and foreign_key_violation (checked at the flush's commit).
RACED_BY_A_WORKER = {"40P01", "23503"}


@pytest.fixture(scope="session", autouse=True)
def flush_by_delete():
    from django.db.backends.postgresql.operations import DatabaseOperations
    from django.db.utils import DatabaseError

    from audit.models import AuditEvent

    truncate = DatabaseOperations.sql_flush
    execute = DatabaseOperations.execute_sql_flush

    def sql_flush(self, style, tables, **options):
        if any(options.values()):  # reset_sequences or allow_cascade: as Django does it
            return truncate(self, style, tables, **options)
        audit = AuditEvent._meta.db_table
        with self.connection.cursor() as cursor:
            cursor.execute(f"SELECT EXISTS (SELECT 1 FROM {self.quote_name(audit)})")
            audited = cursor.fetchone()[0]
        return [
            f"{'TRUNCATE' if table == audit else 'DELETE FROM'} {self.quote_name(table)}"
            for table in tables
            if table != audit or audited
        ]

    def execute_sql_flush(self, sql_list):
        for attempt in range(1, FLUSH_TRIES + 1):
            try:
                return execute(self, sql_list)
            except DatabaseError as error:
                sqlstate = getattr(error.__cause__, "sqlstate", None)
                if attempt == FLUSH_TRIES or sqlstate not in RACED_BY_A_WORKER:
                    raise

    DatabaseOperations.sql_flush = sql_flush
    DatabaseOperations.execute_sql_flush = execute_sql_flush
    yield
    DatabaseOperations.sql_flush = truncate
    DatabaseOperations.execute_sql_flush = execute
