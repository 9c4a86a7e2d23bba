"""The cache shared by every process (CACHE_URL=redis://...), through HTTP against gunicorn with two worker
processes: a client's API requests are counted together, a publication made in another process shows at
the very next request, and nothing reaches anonymous readers early through the cache."""

import gzip
import time
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from leaderboard.cache import forget_round, invalidate_round
from leaderboard.models import Result, System
from submissions.checking.pipeline import publish_round

from ..live_round import checked_submission, set_phase
from ..server import Gunicorn, cache_url
from ..worker import media, media_root, require_services  # noqa: F401

# Committed: the server's processes read what the tests write.
pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

# 5 API answers an hour for an anonymous client, in the served portal (an hour: within_one_hour).
RATE = 5


@pytest.fixture(scope="module")
def server(django_db_setup, django_db_blocker, media_root, tmp_path_factory):  # noqa: F811
    with django_db_blocker.unblock():
        require_services()
        url = cache_url()
        served = Gunicorn(
            tmp_path_factory.mktemp("gunicorn"),
            media_root,
            worker_class="sync",  # get_on_two_processes holds one process with a half-sent request
            CACHE_URL=url,
            API_THROTTLE_ANON=f"{RATE}/hour",
        )
    served.cache_url = url
    yield served
    served.stop()


@pytest.fixture(autouse=True)
def shared(server, settings):
    """This process (the tests' writes: rounds, publication) on the server's cache, emptied."""
    import redis

    redis.Redis.from_url(server.cache_url).flushdb()
    settings.CACHES = {
        "default": {"BACKEND": "portal.backends.cache.RedisCache", "LOCATION": server.cache_url}
    }


@pytest.fixture
def live(shared, rounds, cast):
    """training-v5.1 in review, with a checked submission of Acme (system alpha) and of Globex (beta)."""
    round_ = set_phase(rounds["training-v5.1"], "review")
    checked_submission(round_, cast["a"], "Acme", "alpha")
    checked_submission(round_, cast["b"], "Globex", "beta")
    # The server's processes may still trust a round of that key from an earlier test.
    forget_round(round_.key)
    return round_


def test_a_clients_api_requests_are_counted_together_by_every_process(server):
    # The first request is held half-sent by one process while the other answers the next: counted by
    # each process alone, the RATE + 1 requests would all go through (neither process gets them all).
    def burst():
        codes = [r.status for r in server.get_on_two_processes("/api/v1/rounds/")]
        codes += [server.get("/api/v1/rounds/").status for _ in range(RATE - 2)]
        return codes, server.get("/api/v1/rounds/")

    codes, refused = within_one_hour(server, burst)
    assert codes == [200] * RATE
    assert refused.status == 429
    assert int(refused.headers["Retry-After"]) > 0
    # A client that names another address of its own is still the address it comes from.
    assert server.get("/api/v1/rounds/", {"X-Forwarded-For": "203.0.113.7"}).status == 429
    answered = [a for a in server.answered() if a["path"] == "/api/v1/rounds/"]
    assert len({a["pid"] for a in answered if a["status"] == "200"}) == 2


def forget_throttle_counts(server) -> None:
    """Drop the API's counts (RATE an hour here) of the earlier requests: answers from the cache count
    too, and these tests are about what the answers hold."""
    import redis

    client = redis.Redis.from_url(server.cache_url)
    for key in client.scan_iter("*rl:api:*"):
        client.delete(key)


def within_one_hour(server, burst):
    """What `burst()` returns, made with the counts forgotten and within one hour's window: the counts
    are fixed windows (portal/ratelimit.py), so requests across a window's edge rightly pass the rate
    once in each. A burst that crossed an hour's edge is made again, within the next hour. (With
    windows of a minute, a burst on a busy machine crossed one: 20 of 40 answered 200.)"""
    for _ in range(2):
        forget_throttle_counts(server)
        window = time.time() // 3600
        made = burst()
        if time.time() // 3600 == window:
            break
    return made


def shows(response, *names: str) -> list[bool]:
    body = response.body
    if response.headers.get("Content-Encoding") == "gzip":
        body = gzip.decompress(body)
    return [name.encode() in body for name in names]


def test_a_publication_in_another_process_shows_at_the_next_request_of_each(server, live):
    page, api = f"/r/{live.key}/", f"/api/v1/results/?round={live.key}"
    # Each process has read the round and keeps the anonymous page and answer of before publication.
    for response in server.get_on_two_processes(page):
        assert response.status == 200 and shows(response, "alpha", "beta") == [False, False]
    for response in server.get_on_two_processes(api):
        assert response.status == 200 and b'"count":0' in response.body

    assert publish_round(live, now=timezone.now()) == 2  # in this process, committed

    pages = server.get_on_two_processes(page)
    answers = server.get_on_two_processes(api)
    assert [shows(r, "alpha", "beta") for r in pages] == [[True, True]] * 2
    assert [r.body.count(b'"public_id":"5.1-') for r in answers] == [2, 2]
    processes = [a["pid"] for a in server.answered() if a["path"] == page]
    assert len(set(processes[-2:])) == 2  # the last two answers came from both processes


def test_nothing_reaches_anonymous_readers_through_the_cache_before_the_minute(server, live, cast):
    """The results and systems are marked published but the round's minute is an hour away (the
    embargo is read from the database's clock). Staff, who see them, ask every cached view of the
    round in both processes first; anonymous readers then get none of them, until the minute."""
    Result.objects.filter(system__round=live).update(published=True)
    System.objects.filter(round=live).update(published=True)
    live.publish_at = timezone.now() + timedelta(hours=1)
    live.save(update_fields=["publish_at"])
    client = Client()
    client.force_login(cast["staff"])
    staff = {"Cookie": f"sessionid={client.cookies['sessionid'].value}"}
    api = f"/api/v1/results/?round={live.key}"
    views = [
        f"/r/{live.key}/",
        f"/r/{live.key}/?partial=1",
        f"/r/{live.key}/?format=csv",
        f"/r/{live.key}/?format=json",
        api,
        "/progress/",
    ]
    assert shows(server.get(api, staff), "alpha", "beta") == [True, True]
    for path in views:
        assert [r.status for r in server.get_on_two_processes(path, staff)] == [200, 200], path
        forget_throttle_counts(server)
        for headers in ({}, {"Accept-Encoding": "gzip"}):
            for response in server.get_on_two_processes(path, headers):
                assert response.status == 200, path
                assert shows(response, "alpha", "beta") == [False, False], path

    # What hid them was the minute: once it has passed (and the round's caches are dropped, as the
    # publication does), anonymous readers see them.
    live.publish_at = timezone.now() - timedelta(minutes=1)
    live.save(update_fields=["publish_at"])
    invalidate_round(live.key)
    forget_throttle_counts(server)
    for path in (f"/r/{live.key}/", api):
        for response in server.get_on_two_processes(path):
            assert shows(response, "alpha", "beta") == [True, True], path


def test_a_burst_over_both_threaded_processes_passes_no_more_than_the_rate(tmp_path, media_root):
    """40 requests at once from one address to gunicorn as deployed (2 processes of 8 threads): exactly the
    rate is answered 200, the rest 429. DRF's throttle read the client's history and wrote it back, so
    requests read the same history at once and passed beyond the rate."""
    from concurrent.futures import ThreadPoolExecutor

    require_services()
    url = cache_url()
    served = Gunicorn(tmp_path / "burst", media_root, CACHE_URL=url, API_THROTTLE_ANON="10/hour")
    try:
        served.cache_url = url
        with ThreadPoolExecutor(40) as pool:
            codes = within_one_hour(
                served,
                lambda: list(pool.map(lambda n: served.get("/api/v1/rounds/").status, range(40))),
            )
        assert sorted(codes).count(200) == 10, codes
        assert set(codes) == {200, 429}, codes
    finally:
        served.stop()
