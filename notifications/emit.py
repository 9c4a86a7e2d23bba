"""emit: the write side's one call to tell people of an event (events.py lists them).

    emit("validation.finished", submission=s.pk, validation=v.pk)

It writes the event to the Outbox in the caller's transaction and queues its delivery once that commits:
never in the request path, nothing told of a write that rolled back, and nothing lost to a broker that
does not answer (the clock's sweep, tasks.sweep_outbox, queues it later). The same event emitted twice
is one row (its key: events.key_of)."""

from django.db import transaction

from .tasks import queue, record


def emit(kind: str, **ids) -> None:
    key = record(kind, ids)
    transaction.on_commit(lambda: queue(key))
