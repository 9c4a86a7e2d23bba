"""Atom feeds of published results (leaderboard/api/feeds.py), per round, benchmark and organisation, for
anyone: valid Atom (read by feedparser, as feed readers do), announced on their pages, and held by the embargo exactly as
the pages are (nothing before the round's publication minute, everything after)."""

from datetime import timedelta

import feedparser
import pytest
from django.utils import timezone

from submissions.checking.pipeline import publish_round

from ..live_round import checked_submission, set_phase

pytestmark = pytest.mark.django_db

FEEDS = (
    "/feeds/rounds/training-v5.1/",
    "/feeds/benchmarks/retinanet/",
    "/feeds/organisations/Acme/",
)


@pytest.fixture
def live(rounds, cast):
    round_ = set_phase(rounds["training-v5.1"], "review")
    checked_submission(round_, cast["a"], "Acme")
    checked_submission(round_, cast["b"], "Globex", "beta")
    return round_


def entries(client, url) -> list[str]:
    """The titles of the feed's entries, as a feed reader's library reads it (feedparser)."""
    answer = client.get(url)
    assert answer.status_code == 200
    assert answer["Content-Type"].startswith("application/atom+xml")
    feed = feedparser.parse(answer.content)
    assert not feed.bozo, feed.get("bozo_exception")  # well-formed
    assert feed.version == "atom10"
    assert feed.feed.title and feed.feed.id and feed.feed.updated_parsed
    for entry in feed.entries:
        assert entry.title and entry.id and entry.updated_parsed and entry.link.startswith("http")
    return [entry.title for entry in feed.entries]


def test_nothing_is_in_a_feed_before_the_minute_and_each_result_after(client, cast, live):
    for url in FEEDS:
        assert entries(client, url) == [], url
    publish_round(live, now=live.publish_at)  # published, but its minute is 20 h away
    client.force_login(cast["staff"])  # who asks changes nothing: a feed is the public's
    for url in FEEDS:
        assert entries(client, url) == [], url
    live.publish_at = timezone.now() - timedelta(minutes=1)
    live.save(update_fields=["publish_at"])
    assert len(entries(client, FEEDS[0])) == 2
    assert len(entries(client, FEEDS[1])) == 2
    acme = entries(client, FEEDS[2])
    assert len(acme) == 1 and acme[0].startswith("Acme: alpha")


def test_a_round_or_benchmark_that_does_not_exist_has_no_feed(client, live):
    assert client.get("/feeds/rounds/no-such-round/").status_code == 404
    assert client.get("/feeds/benchmarks/no-such-benchmark/").status_code == 404


def test_the_pages_announce_their_feeds(client, live):
    publish_round(live, now=timezone.now())
    link = '<link rel="alternate" type="application/atom+xml"'
    round_page = client.get("/r/training-v5.1/").content.decode()
    assert f'{link} title="Training v5.1: published results"' in round_page
    assert 'href="/feeds/rounds/training-v5.1/"' in round_page
    result_page = client.get("/r/training-v5.1/Acme/alpha/retinanet/").content.decode()
    assert 'href="/feeds/benchmarks/retinanet/"' in result_page
    assert 'href="/feeds/organisations/Acme/"' in result_page
    system_page = client.get("/r/training-v5.1/Acme/alpha/").content.decode()
    assert (
        f'{link} title="Acme: published results" href="/feeds/organisations/Acme/">' in system_page
    )
