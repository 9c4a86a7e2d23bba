"""Clients that misbehave, against the deployment as the README serves it: Debian's nginx (deploy/nginx.conf)
in front of gunicorn (gunicorn.conf.py), on PostgreSQL (issue 34). Each failed on the deployment before."""

import socket
import time

import pytest
import requests

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
