"""A whole live round's notifications end to end: uploads through the site, the verdicts of a real Celery
worker, an objection, its reply and decision through the API, and publication; every mail through a real
SMTP server on loopback (tests/smtp.py), every webhook to a real receiver that checks signatures and
answers 500 twice before 200 (test_webhooks.Receiver). Each mail is read as its recipient's mail program
would: its headers, its link (opened as the recipient), its one-click unsubscribe (posted signed out,
RFC 8058), and each event reaches each recipient and the CI once."""

import re
import time
from datetime import timedelta

import pytest
from django.utils import timezone

from leaderboard.models import Round
from notifications.emit import emit
from notifications.events import key_of
from notifications.models import Notification, Outbox, Preference, WebhookDelivery
from submissions.checking.pipeline.publication import publish_due_rounds
from submissions.models import Submission, Validation

from ..live_round import live_bundle, live_round, objection_api, upload, wait_final
from ..smtp import SMTPServer
from ..webhook_receiver import SECRET, Receiver
from ..worker import Worker, media, media_root, purge_broker, require_services  # noqa: F401

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


def wait_for(check, timeout=120.0):
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"not so after {timeout:.0f} s")
        time.sleep(0.2)


def all_told() -> bool:
    return not (
        Outbox.objects.filter(delivered_at__isnull=True).exists()
        or Notification.objects.filter(mail=Notification.Mail.PENDING).exists()
        or WebhookDelivery.objects.filter(state=WebhookDelivery.State.PENDING).exists()
    )


def path_of(url: str) -> str:
    assert url.startswith("http://testserver/"), url
    return url.removeprefix("http://testserver")


def test_a_live_rounds_mails_and_webhooks_end_to_end(cast, client, media, settings, tmp_path):  # noqa: F811
    require_services()
    purge_broker()
    settings.NOTIFY_WEBHOOKS_TO_INTERNAL = True  # the receiver is on 127.0.0.1
    smtp, receiver = SMTPServer(), Receiver(fail=2)
    round_ = live_round()
    round_.reviewers.add(cast["reviewer"])
    client.force_login(cast["admin_a"])  # Acme's CI: its admin sets the webhook
    hook = client.post(
        "/api/v1/webhooks/",
        {"organisation": cast["a"].slug, "url": receiver.url, "secret": SECRET},
        content_type="application/json",
    )
    assert hook.status_code == 201, hook.content
    worker = Worker(
        media,
        name="round-mail",
        env={
            "EMAIL_URL": f"smtp://127.0.0.1:{smtp.port}",
            "SITE_URL": "http://testserver",  # the links open in the test's client
            "NOTIFY_DIGEST_WINDOW_S": "0",  # no digests: a mail per event, to read each
            "NOTIFY_MAIL_RETRY_S": "1",
            "NOTIFY_WEBHOOKS_TO_INTERNAL": "1",
        },
    )
    try:
        a = upload(
            client, cast["member_a"], round_, live_bundle(tmp_path, "Acme", "anvil", [50, 52, 51])
        )
        b = upload(
            client, cast["member_b"], round_, live_bundle(tmp_path, "Globex", "globe", [60, 61, 62])
        )
        for submission in wait_final(a, b):
            assert submission.status == Submission.Status.VALID, submission.message

        Round.objects.filter(pk=round_.pk).update(deadline_at=timezone.now() - timedelta(minutes=1))
        filed = objection_api(
            client,
            cast["member_b"],
            "",
            {
                "submission": str(a.uid),
                "system": "anvil",
                "benchmark": "llama31_405b",
                "rule": "Training rules 9.3: seeds",
                "file": "results/anvil/llama31_405b/result_0.txt",
                "lines": "1-20",
                "comment": "The seeds are not random.",
            },
        )
        assert filed.status_code == 201, filed.content
        uid = filed.json()["uid"]
        replied = objection_api(
            client, cast["admin_a"], f"{uid}/reply/", {"text": "They are: seeds.txt."}
        )
        assert replied.status_code == 200, replied.content
        decided = objection_api(
            client, cast["reviewer"], f"{uid}/decide/", {"decision": "accepted"}
        )
        assert decided.json()["status"] == "decided", decided.content

        Round.objects.filter(pk=round_.pk).update(
            review_ends_at=timezone.now() - timedelta(minutes=2),
            publish_at=timezone.now() - timedelta(seconds=1),
        )
        assert publish_due_rounds() == [round_.key]
        wait_for(all_told)
        time.sleep(2)  # a copy would come now
        mails = smtp.parsed()

        # Each event that is mailed by default reached each recipient once, by mail.
        sent = Notification.objects.filter(mail=Notification.Mail.SENT)
        assert sorted((m["To"], m["X-Portal-Event"]) for m in mails) == sorted(
            (n.recipient.email, n.key) for n in sent
        )
        by_kind = {}
        for n in sent.select_related("recipient"):
            by_kind.setdefault(n.kind, set()).add(n.recipient.username)
        assert by_kind == {
            "validation.finished": {"member_a", "admin_a", "member_b"},
            "objection.filed": {"reviewer", "admin_a"},  # not the filer, nor Acme's plain member
            "objection.replied": {"reviewer", "member_b"},  # not its author
            "objection.decided": {"admin_a", "member_b"},
            "results.published": {"member_a", "admin_a", "member_b"},
        }
        assert not Notification.objects.filter(kind="upload.received").exclude(mail="").exists()

        # Each mail as a mail program reads it.
        for m in mails:
            assert {p.get_content_type() for p in m.iter_parts()} == {"text/plain", "text/html"}
            assert m["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
            assert re.fullmatch(r"<http://testserver/\S+>", str(m["List-Unsubscribe"]).strip())
            body = m.get_body(("plain",)).get_content()
            text, footer = re.split(r"\r?\n--\r?\n", body)
            assert str(m["List-Unsubscribe"]).strip()[1:-1] in footer  # the same link, to click
            links = re.findall(r"http://testserver/\S*", text)
            assert len(links) == 1, text
            link = links[0]
            recipient = Notification.objects.get(key=m["X-Portal-Event"], recipient__email=m["To"])
            client.force_login(recipient.recipient)
            assert client.get(path_of(link)).status_code == 200, (m["Subject"], link)
            assert link in m.get_body(("html",)).get_content()
        verdict = next(
            m
            for m in mails
            if m["To"] == "member_a@example.org" and m["X-Portal-Event"].startswith("validation")
        )
        assert verdict["Subject"] == f"[Results portal] Valid: again.tgz for {round_.name}"

        # One click, signed out: no more verdicts by mail for member_a; admin_a still gets them.
        client.logout()
        unsubscribe = path_of(str(verdict["List-Unsubscribe"]).strip()[1:-1])
        answer = client.post(unsubscribe, "List-Unsubscribe=One-Click", content_type="text/plain")
        assert answer.status_code == 200
        assert Preference.objects.get(user=cast["member_a"]).kind == "validation.finished"
        again = Validation.objects.create(
            submission=a, number=2, status="done", verdict="valid", scored=1
        )
        emit("validation.finished", submission=a.pk, validation=again.pk)
        # The event's whole key: "=<pk>" alone also matched the submission's own events where its
        # number was the validation's (4 notifications, in one run).
        key = key_of("validation.finished", {"submission": a.pk, "validation": again.pk})
        wait_for(lambda: all_told() and Outbox.objects.filter(key=key).exists())
        time.sleep(1)
        later = [m["To"] for m in smtp.parsed()[len(mails) :]]
        assert later == ["admin_a@example.org"]
        assert Notification.objects.get(key=key, recipient=cast["member_a"]).in_site
    finally:
        worker.stop()
        smtp.stop()
        receiver.shutdown()
        receiver.server_close()

    # Acme's CI: signed, each of Acme's events once after two 500s, never Globex's own verdict.
    assert receiver.bad == 0 and receiver.answers[:3] == [500, 500, 200]
    keys = [payload["key"] for _, payload in receiver.events]
    assert len(keys) == len(set(keys))
    assert {kind for kind, _ in receiver.events} == {
        "upload.received",
        "validation.finished",
        "objection.filed",
        "objection.replied",
        "objection.decided",
        "results.published",
    }
    assert all(payload["about"] in (str(a.uid), uid) for _, payload in receiver.events)
    assert set(WebhookDelivery.objects.values_list("state", flat=True)) == {"delivered"}
