"""Clients that misbehave, against the deployment as the README serves it: Debian's nginx (deploy/nginx.conf)
in front of gunicorn (gunicorn.conf.py), on PostgreSQL (issue 34). Each failed on the deployment before."""

import json
import socket
import time

import pytest
import requests

from accounts import tokens

from ..live_round import set_phase
from ..server import Gunicorn
from ..worker import media_root, require_services  # noqa: F401

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

PATHS = ["/rounds/", "/", "/api/v1/rounds/"]


@pytest.fixture(scope="module")
def deployed(django_db_setup, django_db_blocker, media_root, tmp_path_factory):  # noqa: F811
    with django_db_blocker.unblock():
        require_services()
        served = Gunicorn(
            tmp_path_factory.mktemp("deployed"),
            media_root,
            behind_nginx=True,
            # The test's requests stand for many clients: one address here, past its page rate.
            PAGE_THROTTLE_ANON="100000/minute",
            API_THROTTLE_ANON="100000/minute",
        )
    yield served
    served.stop()


def p95(seconds: list[float]) -> float:
    return sorted(seconds)[int(0.95 * len(seconds)) - 1]


def timed_get(url: str) -> float:
    started = time.monotonic()
    answer = requests.get(url, timeout=10)
    assert answer.status_code == 200, url
    return time.monotonic() - started


def test_64_half_open_connections_leave_every_other_request_answered(deployed):
    """With gunicorn alone facing the clients (2 processes of 8 threads), 16 connections that had sent half a
    request head stopped the site: GET /rounds/ got no answer while they were held. Here 64 are held, half
    with part of a head, half with nothing sent, while others ask pages and the API: every one is answered,
    and their p95 stays within 5x of idle (bench/slow_clients.py holds them 60 s against a 2x target)."""
    for path in PATHS:  # the first answers fill the caches
        timed_get(deployed.url + path)
    idle = [timed_get(deployed.url + PATHS[n % 3]) for n in range(30)]
    held = []
    try:
        for n in range(64):
            connection = socket.create_connection(("127.0.0.1", deployed.port), timeout=10)
            if n % 2 == 0:
                connection.sendall(b"GET /rounds/ HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # no more
            held.append(connection)
        time.sleep(1)  # the server has read what they sent
        loaded = [timed_get(deployed.url + PATHS[n % 3]) for n in range(30)]
        time.sleep(max(0.0, 4 - sum(loaded)))  # held a few seconds in all
        assert timed_get(deployed.url + "/rounds/") < 5
    finally:
        for connection in held:
            connection.close()
    # A floor of 20 ms: on a busy machine an idle p95 of a few ms would make the ratio noise.
    ratio = p95(loaded) / max(p95(idle), 0.02)
    assert ratio < 5, f"p95 {p95(loaded) * 1000:.0f} ms held, {p95(idle) * 1000:.0f} ms idle"


DEEP_ARRAYS = b"[" * 100_000 + b"]" * 100_000
DEEP_OBJECTS = b'{"a":' * 50_000 + b"1" + b"}" * 50_000


@pytest.mark.parametrize(
    "path",
    ["/api/v1/uploads/", "/api/v1/objections/", "/api/v1/tokens/"],
)
@pytest.mark.parametrize("body", [DEEP_ARRAYS, DEEP_OBJECTS], ids=["arrays", "objects"])
def test_a_json_body_nested_too_deep_is_answered_400_saying_so(deployed, cast, path, body):
    """100,000 nested arrays (200 kB) raised RecursionError in the JSON parser: an HTML 500."""
    key = tokens.issue(cast["member_a"], "deep")[1]
    answer = requests.post(
        deployed.url + path,
        data=body,
        headers={"Authorization": f"Token {key}", "Content-Type": "application/json"},
        timeout=30,
    )
    assert answer.status_code == 400, answer.text[:300]
    assert "nests arrays or objects too deeply" in answer.json()["detail"]
    flat = requests.post(  # the same endpoint still reads a body it can
        deployed.url + path,
        data=json.dumps({"round": "no-such-round"}),
        headers={"Authorization": f"Token {key}", "Content-Type": "application/json"},
        timeout=30,
    )
    assert flat.status_code == 400 and "nests" not in flat.text


def test_the_urls_it_answers_name_the_address_the_client_asked(deployed, rounds, cast):
    """nginx passed the Host without its port ($host): an upload's Location, a submission's URL and its
    receipt's named an address the site is not at (port 80)."""
    set_phase(rounds["training-v5.1"], "open")
    key = tokens.issue(cast["member_a"], "urls")[1]
    created = requests.post(
        deployed.url + "/api/v1/uploads/",
        json={"round": "training-v5.1", "name": "acme.tgz", "size": 10},
        headers={"Authorization": f"Token {key}"},
        timeout=30,
    )
    assert created.status_code == 201, created.text[:300]
    assert created.headers["Location"].startswith(deployed.url + "/api/v1/uploads/")
