"""Who is told of what (notifications/events.py through leaderboard/access/policy.py), told once, after commit,
as each chose. The events are emitted by the real write side (objections, finalize's verdict, publication),
the tasks run in-process (eager) when the transaction's on_commit callbacks run; mail goes to Django's
test outbox."""

from datetime import timedelta

import pytest
from django.core import mail
from django.db import transaction
from django.utils import timezone

from leaderboard.access import policy
from notifications.emit import emit
from notifications.models import Notification, Outbox, Preference
from notifications.tasks import clock, deliver, send_mail
from submissions.checking.pipeline import publish_round
from submissions.review import objections

from ..live_round import checked_submission, set_phase

pytestmark = pytest.mark.django_db


@pytest.fixture
def live(rounds, cast, eager):
    round_ = set_phase(rounds["training-v5.1"], "review")
    round_.reviewers.add(cast["reviewer"])
    acme = checked_submission(round_, cast["a"], "Acme")
    acme.uploaded_by = cast["member_a"]
    acme.save()
    globex = checked_submission(round_, cast["b"], "Globex", "beta")
    globex.uploaded_by = cast["member_b"]
    globex.save()
    return round_, acme, globex


def told(kind):
    return {n.recipient.username for n in Notification.objects.filter(kind=kind)}


def mailed_to():
    return sorted(m.to[0].split("@")[0] for m in mail.outbox)


def test_a_verdict_is_told_to_the_uploader_and_the_admins_after_commit(
    live, django_capture_on_commit_callbacks
):
    _, acme, _ = live
    with django_capture_on_commit_callbacks(execute=True):
        with transaction.atomic():
            emit("validation.finished", submission=acme.pk, validation=acme.validations.get().pk)
            assert not Notification.objects.exists()  # nothing before the commit
    assert told("validation.finished") == {"member_a", "admin_a"}
    assert mailed_to() == ["admin_a", "member_a"]
    n = Notification.objects.get(recipient__username="member_a")
    assert n.title.startswith("Valid: ") and n.url == acme.get_absolute_url()
    assert n.mail == Notification.Mail.SENT


def test_an_invalid_verdict_says_how_many_errors_and_links_the_findings(
    live, django_capture_on_commit_callbacks
):
    _, acme, _ = live
    acme.validations.update(verdict="invalid", errors=3, warnings=1)
    with django_capture_on_commit_callbacks(execute=True):
        emit("validation.finished", submission=acme.pk, validation=acme.validations.get().pk)
    n = Notification.objects.get(recipient__username="admin_a")
    assert n.title.startswith("Invalid, 3 errors") and "3 errors" in n.text
    assert str(acme.uid) in n.url


def test_a_rolled_back_write_tells_nobody(live, django_capture_on_commit_callbacks):
    _, acme, _ = live
    with django_capture_on_commit_callbacks(execute=True):
        with pytest.raises(RuntimeError):
            with transaction.atomic():
                emit("upload.received", submission=acme.pk)
                raise RuntimeError("the write failed")
    assert not Outbox.objects.exists() and not Notification.objects.exists()


def test_an_objection_its_reply_and_decision_reach_the_parties_and_reviewers(
    live, cast, django_capture_on_commit_callbacks
):
    _, acme, _ = live
    with django_capture_on_commit_callbacks(execute=True):
        objection = objections.file_objection(
            cast["member_b"], acme, system_key="alpha", rule="5.1", comment="Seeds repeat."
        )
    # the reviewer and Acme's admin; not the filer, not Acme's plain member, not outsiders
    assert told("objection.filed") == {"reviewer", "admin_a"}
    with django_capture_on_commit_callbacks(execute=True):
        objections.reply(cast["admin_a"], objection, "They do not: see seeds.txt.")
    assert told("objection.replied") == {"reviewer", "member_b"}  # not its author
    with django_capture_on_commit_callbacks(execute=True):
        objections.decide(cast["reviewer"], objection, "accepted", "Seeds differ.")
    assert told("objection.decided") == {"admin_a", "member_b"}
    assert (
        "Seeds differ."
        in Notification.objects.get(kind="objection.decided", recipient=cast["member_b"]).text
    )


def test_nobody_hears_of_what_the_policy_no_longer_shows_them(
    live, cast, django_capture_on_commit_callbacks
):
    _, acme, _ = live
    with django_capture_on_commit_callbacks(execute=True):
        objection = objections.file_objection(
            cast["member_b"], acme, system_key="alpha", rule="5.1", comment="Seeds repeat."
        )
    cast["member_b"].memberships.all().delete()  # the filer left Globex: the thread is not theirs
    assert not policy.may_see_objection(policy.viewer(cast["member_b"]), objection)
    with django_capture_on_commit_callbacks(execute=True):
        objections.reply(cast["admin_a"], objection, "They do not.")
    assert told("objection.replied") == {"reviewer"}


def test_publication_tells_each_organisation_of_its_own_results_and_reviewers_of_the_round(
    live, cast, django_capture_on_commit_callbacks
):
    round_, _, _ = live
    with django_capture_on_commit_callbacks(execute=True):
        publish_round(round_, now=timezone.now())
    mine = {
        (n.recipient.username, n.title)
        for n in Notification.objects.filter(kind="results.published")
    }
    assert {who for who, _ in mine} == {"member_a", "admin_a", "member_b"}
    assert told("round.published") == {"reviewer"}


def test_publication_is_told_at_its_minute_never_before(
    live, cast, django_capture_on_commit_callbacks
):
    round_, _, _ = live
    with django_capture_on_commit_callbacks(execute=True):
        publish_round(round_, now=round_.publish_at)  # published, but its minute is 20 h away
    with django_capture_on_commit_callbacks(execute=True):
        clock()  # the sweep finds the events and holds them
    assert not Notification.objects.exists() and mail.outbox == []
    assert Outbox.objects.filter(delivered_at__isnull=True).count() == 3  # 2 results, 1 round
    round_.publish_at = timezone.now() - timedelta(minutes=1)
    round_.save(update_fields=["publish_at"])
    Outbox.objects.update(created_at=timezone.now() - timedelta(minutes=2))
    with django_capture_on_commit_callbacks(execute=True):
        clock()
    assert told("results.published") == {"member_a", "admin_a", "member_b"}
    assert told("round.published") == {"reviewer"}


def test_a_redelivered_task_tells_and_mails_nobody_twice(live, django_capture_on_commit_callbacks):
    _, acme, _ = live
    with django_capture_on_commit_callbacks(execute=True):
        emit("upload.received", submission=acme.pk)
        emit("validation.finished", submission=acme.pk, validation=acme.validations.get().pk)
    rows, mails = Notification.objects.count(), len(mail.outbox)
    assert rows == 4 and mails == 2  # upload.received is in the site only by default
    for key in Outbox.objects.values_list("key", flat=True):
        deliver(key)  # as a retried task or a redelivered message would
    for pk in Notification.objects.values_list("pk", flat=True):
        send_mail(pk)
    assert Notification.objects.count() == rows and len(mail.outbox) == mails


def test_a_preference_of_none_tells_nothing_and_site_only_mails_nothing(
    live, cast, django_capture_on_commit_callbacks
):
    _, acme, _ = live
    Preference.objects.create(user=cast["member_a"], kind="validation.finished", channel="none")
    Preference.objects.create(user=cast["admin_a"], kind="validation.finished", channel="site")
    with django_capture_on_commit_callbacks(execute=True):
        emit("validation.finished", submission=acme.pk, validation=acme.validations.get().pk)
    assert told("validation.finished") == {"admin_a"}
    assert mail.outbox == []


def test_an_unknown_event_is_refused_where_it_is_emitted(live):
    with pytest.raises(ValueError, match="unknown event"):
        emit("validation.done", submission=1)


def test_the_clock_reminds_organisations_without_a_valid_submission_once_per_deadline(
    live, cast, django_capture_on_commit_callbacks
):
    round_, _, globex = live
    globex.status = "invalid"
    globex.save()
    round_.deadline_at = timezone.now() + timedelta(hours=5)
    round_.save()
    for _ in range(2):
        with django_capture_on_commit_callbacks(execute=True):
            clock()
    assert told("deadline.24h") == {"member_b"}  # Acme has a valid one; once, however often
    round_.deadline_at = timezone.now() + timedelta(minutes=30)
    round_.save()
    with django_capture_on_commit_callbacks(execute=True):
        clock()
    assert told("deadline.1h") == {"member_b"}
    assert Notification.objects.filter(kind__startswith="deadline").count() == 2


def test_the_clock_tells_the_reviewers_that_review_opens_and_closes(
    live, cast, django_capture_on_commit_callbacks
):
    round_, _, _ = live
    now = timezone.now()
    round_.deadline_at, round_.grace_minutes = now - timedelta(minutes=10), 0
    round_.review_ends_at = now + timedelta(hours=5)
    round_.save()
    with django_capture_on_commit_callbacks(execute=True):
        clock()
    assert told("round.review_opens") == {"reviewer"}
    round_.review_ends_at = now - timedelta(minutes=1)
    round_.save()
    with django_capture_on_commit_callbacks(execute=True):
        clock()
    assert told("round.review_closes") == {"reviewer"}
