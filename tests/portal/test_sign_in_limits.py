"""Signing in is limited apart from page views (portal/ratelimit.py sign_in_wait), asked over HTTP of a
live server: per address and per account named, whatever the address. Issue 34: 120 anonymous page
views from one address made the sign-in page answer 429 for everyone there.

The rates are set low, per day (a window that does not turn during a test), and the cache emptied."""

import re

import pytest
import requests
from django.core.cache import cache
from django.test import RequestFactory

from portal.ratelimit import sign_in_wait

pytestmark = pytest.mark.django_db(transaction=True)  # the live server's thread reads the cast

PAGES, PER_ADDRESS, PER_ACCOUNT = 20, 8, 4


@pytest.fixture
def limits(settings):
    settings.PAGE_THROTTLE_ANON = f"{PAGES}/day"
    settings.LOGIN_THROTTLE_ADDRESS = f"{PER_ADDRESS}/day"
    settings.LOGIN_THROTTLE_ACCOUNT = f"{PER_ACCOUNT}/day"
    cache.clear()
    yield
    cache.clear()


def sign_in(base: str, username: str, password: str = "pw") -> int:
    """The sign-in form's answer to `username` and `password`: 302 signed in, 200 the form again
    (a wrong password), 429 refused for the rate."""
    session = requests.Session()
    page = session.get(f"{base}/accounts/login/", timeout=30)
    assert page.status_code == 200, page.status_code
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)[1]
    answer = session.post(
        f"{base}/accounts/login/",
        data={"csrfmiddlewaretoken": token, "username": username, "password": password},
        allow_redirects=False,
        timeout=30,
    )
    return answer.status_code


def test_page_views_never_refuse_a_sign_in(live_server, limits, cast):
    base = live_server.url
    views = [requests.get(f"{base}/rounds/", timeout=30).status_code for _ in range(PAGES + 1)]
    assert views == [200] * PAGES + [429]
    assert sign_in(base, "member_a") == 302  # was 429, as every page of the address
    assert requests.get(f"{base}/rounds/", timeout=30).status_code == 429  # pages still are


def test_sign_ins_are_limited_per_account(live_server, limits, cast):
    base = live_server.url
    answers = [sign_in(base, "member_a") for _ in range(PER_ACCOUNT + 1)]
    assert answers == [302] * PER_ACCOUNT + [429]
    assert sign_in(base, "member_b") == 302  # another account, from the same address


def test_sign_ins_are_limited_per_address(live_server, limits, cast):
    base = live_server.url
    answers = [sign_in(base, f"nobody{i}", "wrong") for i in range(PER_ADDRESS)]
    assert answers == [200] * PER_ADDRESS  # the form again: no such account, one try each
    assert sign_in(base, "member_b") == 429  # the right password, from the same address


def test_an_account_is_limited_from_every_address(limits):
    def attempt(address: str):
        request = RequestFactory().post(
            "/accounts/login/", {"username": "member_a"}, REMOTE_ADDR=address
        )
        return sign_in_wait(request)

    waits = [attempt(f"192.0.2.{i}") for i in range(PER_ACCOUNT + 1)]
    assert waits[:PER_ACCOUNT] == [None] * PER_ACCOUNT and waits[-1] > 0
    assert sign_in_wait(RequestFactory().get("/accounts/login/")) is None  # the form is no sign-in
