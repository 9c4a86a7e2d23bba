"""The audit log is append-only and written through audit.log.record."""

import pytest

from audit.log import record
from audit.models import AppendOnly, AuditEvent

pytestmark = pytest.mark.django_db


def test_record_says_who_did_what_to_which_object(cast):
    event = record(
        "token.created",
        actor=cast["member_a"],
        obj=("accounts.apitoken", "t-1"),
        round="training-v5.1",
        organisation=cast["a"],
        name="CI",
    )
    event = AuditEvent.objects.get(pk=event.pk)
    assert (event.actor, event.actor_name, event.action) == (
        cast["member_a"],
        "member_a",
        "token.created",
    )
    assert (event.object_type, event.object_uid, event.round_key, event.organisation) == (
        "accounts.apitoken",
        "t-1",
        "training-v5.1",
        "Acme",
    )
    assert event.details == {"name": "CI"}


def test_an_object_is_named_by_its_uid_and_gives_its_organisation(cast):
    event = record("organisation.seen", obj=cast["b"])
    assert event.object_uid == str(cast["b"].uid) and event.actor is None
    assert event.object_type == "accounts.organisation"


def test_an_event_cannot_be_changed_or_deleted(cast):
    event = record("round.published", round="training-v5.1")
    event.action = "something else"
    with pytest.raises(AppendOnly):
        event.save()
    with pytest.raises(AppendOnly):
        event.delete()
    with pytest.raises(AppendOnly):
        AuditEvent.objects.filter(pk=event.pk).update(action="x")
    with pytest.raises(AppendOnly):
        AuditEvent.objects.all().delete()
    assert AuditEvent.objects.get(pk=event.pk).action == "round.published"


def test_staff_read_the_log_in_the_admin_but_cannot_change_it(client, cast):
    record("round.published", round="training-v5.1", actor=cast["staff"])
    client.force_login(cast["staff"])  # staff, not a superuser, with no permission granted
    page = client.get("/admin/audit/auditevent/?q=published")
    assert page.status_code == 200 and "round.published" in page.content.decode()
    assert client.get("/admin/audit/auditevent/add/").status_code == 403
    client.force_login(cast["reviewer"])  # not staff: the admin sends them to its login
    assert client.get("/admin/audit/auditevent/").status_code == 302


def test_the_database_refuses_to_change_an_event_too(cast):
    from django.db import DatabaseError, connection, transaction

    if connection.vendor != "postgresql":
        pytest.skip("the trigger is PostgreSQL's")
    event = record("round.published", round="training-v5.1")
    for sql in (
        "UPDATE audit_auditevent SET action = 'x' WHERE id = %s",
        "DELETE FROM audit_auditevent WHERE id = %s",
    ):
        with pytest.raises(DatabaseError, match="append-only"), transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute(sql, [event.pk])
    assert AuditEvent.objects.get(pk=event.pk).action == "round.published"
