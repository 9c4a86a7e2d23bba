"""The deadline rush batched per recipient (notifications/tasks.py send_mail, mail.digest): what is pending
for one recipient goes as one mail listing each, a recipient mailed less than NOTIFY_DIGEST_WINDOW_S ago
waits for the window's end, and nothing is mailed twice however often the tasks run. The tasks are called
in-process; mail goes to Django's test outbox (the real worker and SMTP server: test_delivery_worker.py)."""

from datetime import timedelta

import pytest
from django.core import mail
from django.utils import timezone

from notifications.models import Notification, Preference
from notifications.preferences import read_unsubscribe_token
from notifications.tasks import clock, send_mail

pytestmark = pytest.mark.django_db


def pending(user, n, kind="validation.finished"):
    return [
        Notification.objects.create(
            key=f"{kind}:submission={i}",
            kind=kind,
            recipient=user,
            title=f"Valid: bundle-{i}.tgz",
            text=f"The portal checked bundle-{i}.tgz.",
            url=f"/submissions/{i}/",
            mail=Notification.Mail.PENDING,
        )
        for i in range(n)
    ]


def test_what_is_pending_for_one_recipient_goes_as_one_mail_listing_each(cast, settings):
    settings.SITE_URL = "https://results.example"
    rows = pending(cast["member_a"], 5)
    pending(cast["member_b"], 1)
    assert send_mail(rows[2].pk) == 5
    for row in rows:  # the other tasks of the rush, and copies of them
        assert send_mail(row.pk) == 0
    [digest] = mail.outbox
    assert digest.to == ["member_a@example.org"] and digest.extra_headers["X-Portal-Digest"] == "5"
    assert digest.subject == "[Results portal] Valid: bundle-0.tgz, and 4 more"
    for i in range(5):
        assert digest.body.count(f"Valid: bundle-{i}.tgz") == 1
        assert f"https://results.example/submissions/{i}/" in digest.body
    html = digest.alternatives[0].content
    assert html.count("<li>") == 5 and 'href="https://results.example/submissions/4/"' in html
    assert not Notification.objects.filter(recipient=cast["member_a"]).exclude(mail="sent").exists()
    assert Notification.objects.get(recipient=cast["member_b"]).mail == "pending"  # not theirs


def test_a_recipient_mailed_a_moment_ago_waits_for_the_windows_end(
    cast, settings, django_capture_on_commit_callbacks
):
    settings.NOTIFY_DIGEST_WINDOW_S = 60
    [first] = pending(cast["member_a"], 1, kind="upload.received")
    assert send_mail(first.pk) == 1  # the first of the rush goes at once
    rows = pending(cast["member_a"], 3)
    with django_capture_on_commit_callbacks() as queued:
        assert send_mail(rows[0].pk) == 0  # mailed a moment ago: put off
    assert len(queued) == 1 and len(mail.outbox) == 1
    assert send_mail(rows[0].pk, window_ended=True) == 3  # as the task put off runs
    assert [m.extra_headers.get("X-Portal-Digest") for m in mail.outbox] == [None, "3"]
    settings.NOTIFY_DIGEST_WINDOW_S = 0
    Notification.objects.update(mailed_at=timezone.now() - timedelta(seconds=61))
    [late] = pending(cast["member_a"], 1, kind="objection.filed")
    assert send_mail(late.pk) == 1 and len(mail.outbox) == 3  # the window passed: at once


def test_a_digests_unsubscribe_stops_every_kind_it_lists(client, cast):
    rows = pending(cast["member_a"], 2) + pending(cast["member_a"], 1, kind="objection.filed")
    send_mail(rows[0].pk)
    [digest] = mail.outbox
    link = digest.extra_headers["List-Unsubscribe"].strip("<>")
    token = link.rstrip("/").rsplit("/", 1)[1]
    assert read_unsubscribe_token(token) == (
        cast["member_a"].pk,
        ["objection.filed", "validation.finished"],
    )
    answer = client.post(link.split("localhost:8000", 1)[1], {"List-Unsubscribe": "One-Click"})
    assert answer.status_code == 200
    assert dict(
        Preference.objects.filter(user=cast["member_a"]).values_list("kind", "channel")
    ) == {"objection.filed": "site", "validation.finished": "site"}


def test_the_clocks_sweep_mails_what_an_outage_left_one_digest_a_recipient(cast, eager):
    pending(cast["member_a"], 3)
    pending(cast["member_b"], 1)
    Notification.objects.update(created_at=timezone.now() - timedelta(seconds=90))
    clock()
    assert mail.outbox == []  # their own retries may still come
    Notification.objects.update(created_at=timezone.now() - timedelta(minutes=2, seconds=5))
    clock()  # the tasks run in-process as they are queued
    assert sorted((m.to[0], m.extra_headers.get("X-Portal-Digest")) for m in mail.outbox) == [
        ("member_a@example.org", "3"),
        ("member_b@example.org", None),
    ]
    assert not Notification.objects.exclude(mail="sent").exists()
    clock()
    assert len(mail.outbox) == 2
