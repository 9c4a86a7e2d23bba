"""The cache shared by every process (CACHE_URL=redis://...), through HTTP against gunicorn with two worker
processes: a client's API requests are counted together."""

import os

import pytest

from .server import Gunicorn
from .worker import media, media_root, require_services  # noqa: F401

# Committed: the server's processes read what the tests write.
pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

# 5 API answers a minute for an anonymous client, in the served portal.
RATE = 5


def cache_url() -> str:
    """The Redis database the tests may use as the shared cache (TEST_CACHE_URL; bin/run_tests.py sets it
    when it answers); the test skips, saying why, without one."""
    import redis

    url = os.environ.get("TEST_CACHE_URL", "")
    if not url:
        pytest.skip(
            "needs a Redis for the shared cache: TEST_CACHE_URL is not set (bin/run_tests.py sets it "
            "when the Redis it names answers, by default redis://127.0.0.1:6379/14)"
        )
    try:
        redis.Redis.from_url(url, socket_connect_timeout=2).ping()
    except redis.RedisError as error:
        pytest.skip(f"the shared cache's Redis at TEST_CACHE_URL does not answer ({error})")
    return url


@pytest.fixture(scope="module")
def server(django_db_setup, django_db_blocker, media_root, tmp_path_factory):  # noqa: F811
    with django_db_blocker.unblock():
        require_services()
        url = cache_url()
        served = Gunicorn(
            tmp_path_factory.mktemp("gunicorn"),
            media_root,
            CACHE_URL=url,
            API_THROTTLE_ANON=f"{RATE}/minute",
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
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": server.cache_url,
        }
    }


def test_a_clients_api_requests_are_counted_together_by_every_process(server):
    # The first request is held half-sent by one process while the other answers the next: counted by
    # each process alone, the RATE + 1 requests would all go through (neither process gets them all).
    codes = [r.status for r in server.get_on_two_processes("/api/v1/rounds/")]
    codes += [server.get("/api/v1/rounds/").status for _ in range(RATE - 2)]
    refused = server.get("/api/v1/rounds/")
    assert codes == [200] * RATE
    assert refused.status == 429
    assert int(refused.headers["Retry-After"]) > 0
    answered = [a for a in server.answered() if a["path"] == "/api/v1/rounds/"]
    assert len({a["pid"] for a in answered if a["status"] == "200"}) == 2
