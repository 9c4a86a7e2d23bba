"""Abuse of a production-like portal (issue 26), through HTTP against gunicorn (tests/server.py) on
PostgreSQL and a shared Redis cache: one test per way found to stall the site, borrow rights or borrow
names. Each failed on the code before its fix."""

import time

import pytest
import requests
from django.test import Client

from submissions.models import Submission

from .live_round import checked_submission, set_phase
from .server import Gunicorn
from .test_shared_cache import cache_url
from .worker import media, media_root, require_services  # noqa: F401

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


@pytest.fixture(scope="module")
def server(django_db_setup, django_db_blocker, media_root, tmp_path_factory):  # noqa: F811
    with django_db_blocker.unblock():
        require_services()
        url = cache_url()
        served = Gunicorn(tmp_path_factory.mktemp("gunicorn"), media_root, CACHE_URL=url)
    served.cache_url = url
    yield served
    served.stop()


@pytest.fixture(autouse=True)
def shared(server, settings):
    """This process on the server's cache, emptied: no answer or throttle count of an earlier test."""
    import redis

    redis.Redis.from_url(server.cache_url).flushdb()
    settings.CACHES = {
        "default": {"BACKEND": "portal.cache.RedisCache", "LOCATION": server.cache_url}
    }


def signed_in(user) -> requests.Session:
    """A browser session of `user` (signed with the server's SECRET_KEY, stored in the database)."""
    client = Client()
    client.force_login(user)
    session = requests.Session()
    session.cookies.set("sessionid", client.cookies["sessionid"].value)
    return session


# -- 1. a search of many words ---------------------------------------------------------------------


def test_a_search_of_many_words_holds_no_process(server):
    """1,900 words held a web process 12-25 s (one chained filter per word)."""
    q = " ".join(["a"] * 1900)  # the longest query line gunicorn reads (4 kB)
    for path in ("/api/v1/results/", "/api/v1/systems/", "/"):
        started = time.monotonic()
        response = requests.get(server.url + path, params={"q": q}, timeout=60)
        assert response.status_code == 200, path
        assert time.monotonic() - started < 3, path


# -- 2. peer review for organisations that did not really submit -----------------------------------


def test_a_junk_upload_buys_no_peer_review(server, rounds, orgs):
    """An organisation whose only submission failed (a 14-byte junk upload before the deadline) reads
    nothing of the others' in review; one whose submission counts reads it all."""
    round_ = set_phase(rounds["training-v5.1"], "review")
    acme = checked_submission(round_, orgs["a"], "Acme", "alpha")
    Submission.objects.create(
        round=round_,
        organisation=orgs["b"],
        uploaded_by=orgs["member_b"],
        bundle="bundles/junk.tgz",
        original_name="junk.tgz",
        sha256="f" * 64,
        size=14,
        status=Submission.Status.FAILED,
    )
    junk, peer = signed_in(orgs["member_b"]), signed_in(orgs["member_b"])
    answer = junk.get(f"{server.url}/api/v1/results/?round={round_.key}", timeout=30)
    assert answer.status_code == 200 and answer.json()["count"] == 0
    assert junk.get(f"{server.url}/submissions/{acme.uid}/", timeout=30).status_code == 404

    checked_submission(round_, orgs["b"], "Globex", "beta")  # Globex now submits for real
    answer = peer.get(f"{server.url}/api/v1/results/?round={round_.key}", timeout=30)
    assert answer.json()["count"] == 2
    assert peer.get(f"{server.url}/submissions/{acme.uid}/", timeout=30).status_code == 200
