"""The embargo holds for every channel at once: a round published ahead of its minute puts nothing in the
Atom feeds (read by feedparser), tells nobody in the site or by mail, and posts nothing to a webhook; at
the minute (the clock's sweep) each result is in the feeds and each organisation and its CI hear of their
own, once. Tasks run in-process (eager) as the transaction's on_commit callbacks run."""

from datetime import timedelta

import feedparser
import pytest
from django.core import mail
from django.utils import timezone

from notifications.models import Notification, Outbox, Webhook
from notifications.tasks import clock
from submissions.checking.pipeline import publish_round
from submissions.models import Submission

from ..live_round import checked_submission, set_phase
from ..webhook_receiver import SECRET, Receiver

pytestmark = pytest.mark.django_db

FEEDS = ("/feeds/rounds/training-v5.1/", "/feeds/organisations/Acme/")


@pytest.fixture
def receiver():
    server = Receiver(fail=0)
    yield server
    server.shutdown()
    server.server_close()


def feed_titles(client) -> list[list[str]]:
    return [[e.title for e in feedparser.parse(client.get(url).content).entries] for url in FEEDS]


def test_nothing_goes_out_before_the_publication_minute_and_each_thing_once_after(
    client, rounds, cast, eager, settings, receiver, django_capture_on_commit_callbacks
):
    settings.NOTIFY_WEBHOOKS_TO_INTERNAL = True  # the receiver is on 127.0.0.1
    round_ = set_phase(rounds["training-v5.1"], "review")
    for org, member, name, system in (
        (cast["a"], cast["member_a"], "Acme", "alpha"),
        (cast["b"], cast["member_b"], "Globex", "beta"),
    ):
        s = checked_submission(round_, org, name, system)
        s.uploaded_by = member
        s.save()
    Webhook.objects.create(organisation=cast["a"], url=receiver.url, secret=SECRET)

    with django_capture_on_commit_callbacks(execute=True):
        publish_round(round_, now=round_.publish_at)  # published, but its minute is 20 h away
    for _ in range(2):
        Outbox.objects.update(created_at=timezone.now() - timedelta(minutes=5))
        with django_capture_on_commit_callbacks(execute=True):
            clock()  # the sweep finds the events, and holds them
    assert feed_titles(client) == [[], []]
    assert not Notification.objects.exists() and mail.outbox == []
    assert receiver.events == [] and receiver.answers == []

    round_.publish_at = timezone.now() - timedelta(minutes=1)  # the minute has come
    round_.save(update_fields=["publish_at"])
    for _ in range(2):  # a second sweep finds nothing more to tell
        with django_capture_on_commit_callbacks(execute=True):
            clock()
    rounds_feed, acme_feed = feed_titles(client)
    assert len(rounds_feed) == 2 and len(acme_feed) == 1 and acme_feed[0].startswith("Acme: ")
    told = {
        (n.kind, n.recipient.username)
        for n in Notification.objects.filter(kind__in=("results.published", "round.published"))
    }
    assert told == {
        ("results.published", "member_a"),
        ("results.published", "admin_a"),
        ("results.published", "member_b"),
    }  # the round's phase goes to its reviewers, and this round has none
    assert sorted(m.to[0] for m in mail.outbox) == [
        "admin_a@example.org",
        "member_a@example.org",
        "member_b@example.org",
    ]
    [(kind, payload)] = receiver.events  # Acme's CI: its own results, once; never Globex's
    acme = Submission.objects.get(organisation=cast["a"])
    assert kind == "results.published" and payload["about"] == str(acme.uid)
