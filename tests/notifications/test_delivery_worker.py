"""Delivery by a real Celery worker on PostgreSQL and Redis: after commit, once per event and recipient
however often its tasks run, and through an SMTP outage (tests/smtp.py) without a loss or a double.
The embedded mail backend (no EMAIL_URL) writes each mail as an .eml file."""

import email
import email.policy
import re
import time

import pytest
from django.db import transaction

from notifications.emit import emit
from notifications.models import Notification, Outbox
from notifications.tasks import deliver, send_mail

from ..live_round import checked_submission, set_phase
from ..smtp import SMTPServer
from ..worker import Worker, media, media_root, purge_broker, require_services  # noqa: F401

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


def wait_for(check, timeout=60.0):
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"not so after {timeout:.0f} s")
        time.sleep(0.1)


def start_worker(media_root, **env):  # noqa: F811
    require_services()
    purge_broker()
    media_root.mkdir(parents=True, exist_ok=True)
    return Worker(media_root, concurrency=1, name="notify", env=env)


@pytest.fixture
def live(rounds, cast):
    round_ = set_phase(rounds["training-v5.1"], "open")
    made = []
    for n, (org, member) in enumerate(
        [(cast["a"], cast["member_a"]), (cast["b"], cast["member_b"])]
    ):
        s = checked_submission(round_, org, org.name, f"sys{n}")
        s.uploaded_by = member
        s.save()
        made.append(s)
    return made


def verdict(submission):
    with transaction.atomic():
        emit(
            "validation.finished",
            submission=submission.pk,
            validation=submission.validations.get().pk,
        )


def test_a_redelivered_task_mails_nobody_twice(live, media_root, tmp_path, cast):  # noqa: F811
    acme, globex = live
    folder = tmp_path / "mail"
    worker = start_worker(media_root, EMAIL_FILE_PATH=str(folder))
    try:
        verdict(acme)  # member_a and admin_a
        wait_for(lambda: len(list(folder.glob("*.eml"))) == 2)
        key = Outbox.objects.get().key
        for _ in range(2):  # as a retried task or a redelivered message
            deliver.delay(key)
            for pk in Notification.objects.values_list("pk", flat=True):
                send_mail.delay(pk)
        verdict(globex)  # member_b: queued after the copies, handled after them (one process)
        wait_for(lambda: len(list(folder.glob("*.eml"))) >= 3)
        time.sleep(1)
    finally:
        worker.stop()
    mails = [
        email.message_from_bytes(p.read_bytes(), policy=email.policy.default)
        for p in folder.glob("*.eml")
    ]
    assert sorted(m["To"] for m in mails) == [
        "admin_a@example.org",
        "member_a@example.org",
        "member_b@example.org",
    ]
    assert Notification.objects.count() == 3
    first = mails[0]
    assert str(first["List-Unsubscribe"]).strip().startswith("<http://")
    assert first["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    assert {p.get_content_type() for p in first.iter_parts()} == {"text/plain", "text/html"}


def listed(message) -> list[str]:
    """The notifications a mail tells of: its subject's, or each a digest lists."""
    if message["X-Portal-Digest"] is None:
        return [message["Subject"].removeprefix("[Results portal] ")]
    text = message.get_body(("plain",)).get_content()
    return re.findall(r"^\d+\. (.+?)\r?$", text, flags=re.M)


def rush(round_, cast, count):
    """`count` checked submissions of Acme uploaded by member_a: each verdict tells member_a and admin_a."""
    made = []
    for n in range(count):
        s = checked_submission(round_, cast["a"], "Acme", f"rush{n}")
        s.uploaded_by = cast["member_a"]
        s.save()
        made.append(s)
    return made


def per_recipient(smtp):
    mails = {}
    for m in smtp.parsed():
        mails.setdefault(m["To"], []).append(m)
    return mails


RUSH = 40


def test_an_smtp_outage_in_the_rush_delays_every_mail_and_loses_or_doubles_none(
    rounds,
    cast,
    media_root,  # noqa: F811
):
    round_ = set_phase(rounds["training-v5.1"], "open")
    submissions = rush(round_, cast, RUSH)
    smtp = SMTPServer()
    smtp.stop()  # down: the port refuses
    worker = start_worker(
        media_root, EMAIL_URL=f"smtp://127.0.0.1:{smtp.port}", NOTIFY_MAIL_RETRY_S="1"
    )
    try:
        started = time.monotonic()
        for s in submissions:
            verdict(s)  # the write side's step commits whatever the mail server does
        wait_for(lambda: Notification.objects.filter(mail_attempts__gt=0).count() == 2 * RUSH)
        assert smtp.messages == []
        smtp.start()
        back = time.monotonic()
        wait_for(lambda: Notification.objects.filter(mail="sent").count() == 2 * RUSH, timeout=120)
        arrived = time.monotonic()
        time.sleep(3)  # any copy would come now
    finally:
        worker.stop()
        smtp.stop()
    mails = per_recipient(smtp)
    assert sorted(mails) == ["admin_a@example.org", "member_a@example.org"]
    titles = sorted(f"Valid: {s.original_name} for {round_.name}" for s in submissions)
    for to, theirs in mails.items():
        told = sorted(t for m in theirs for t in listed(m))
        assert told == titles, to  # every verdict, none twice
        assert len(theirs) == 1, to  # the pile as one digest
    print(
        f"SMTP outage in the rush: {RUSH} verdicts to 2 recipients, "
        f"{len(mails['member_a@example.org'])} and {len(mails['admin_a@example.org'])} mails each "
        f"(a digest of {RUSH}); all arrived {arrived - back:.1f} s after the server came back "
        f"({back - started:.1f} s down, retries every NOTIFY_MAIL_RETRY_S=1 s doubling)"
    )


def test_the_rush_is_batched_per_recipient_in_short_windows(rounds, cast, media_root):  # noqa: F811
    round_ = set_phase(rounds["training-v5.1"], "open")
    submissions = rush(round_, cast, RUSH)
    smtp = SMTPServer()
    worker = start_worker(
        media_root, EMAIL_URL=f"smtp://127.0.0.1:{smtp.port}", NOTIFY_DIGEST_WINDOW_S="4"
    )
    try:
        started = time.monotonic()
        # The first verdict is mailed at once, on its own; the rush that follows waits for its window. (Sent
        # all together, the 40 verdicts could all be written before the worker sent the first mail, and went
        # as one digest: the test failed about once in three runs on a quiet machine.)
        verdict(submissions[0])
        wait_for(lambda: Notification.objects.filter(mail="sent").count() == 2, timeout=60)
        for s in submissions[1:]:
            verdict(s)
        emitted = time.monotonic()
        wait_for(lambda: Notification.objects.filter(mail="sent").count() == 2 * RUSH, timeout=60)
        done = time.monotonic()
        time.sleep(5)  # a window more: any copy would come now
    finally:
        worker.stop()
        smtp.stop()
    mails = per_recipient(smtp)
    titles = sorted(f"Valid: {s.original_name} for {round_.name}" for s in submissions)
    windows = 1 + int((emitted - started) // 4) + 1  # the first at once, then one a window
    for to, theirs in mails.items():
        assert sorted(t for m in theirs for t in listed(m)) == titles, to
        assert 2 <= len(theirs) <= windows, (to, len(theirs))
    print(
        f"the rush without an outage: {RUSH} verdicts in {emitted - started:.1f} s to 2 recipients, "
        f"{sorted(len(v) for v in mails.values())} mails each (4 s windows), the last "
        f"{done - emitted:.1f} s after the last verdict"
    )
