"""No page writes an error in the browser's console (issue 39): every page kind, visited in Chromium on the
shared rounds, charts drawn, leaves no entry of level SEVERE (a failed load, a 404, a refusal of the
Content-Security-Policy, a script's exception). Before: the API docs' logo, refused by the policy, and
/favicon.ico, answering 404 on every page that names no icon (an API answer, a raw log)."""

import pytest
from django.urls import NoReverseMatch, reverse

from .pages import charts_drawn, open_page, wait

pytestmark = [pytest.mark.shared_rounds, pytest.mark.browser]

SYSTEM = "/r/training-v5.1/Dell/1xXE9680Lx8H200-SXM-141GB/"
RESULT = SYSTEM + "rgat/"
PAGES = {
    "home": "/",
    "search": "/?q=H200",
    "rounds": "/rounds/",
    "progress": "/progress/",
    "round": "/r/training-v5.1/",
    "round filtered": "/r/training-v5.1/?division=closed&show=speedup",
    "round not imported": "/r/training-v2.0/",
    "system": SYSTEM,
    "result": RESULT,
    "log": RESULT + "log/7/?line=5141#L5141",
    "raw log": RESULT + "log/7/raw/",
    "compare": "/r/training-v5.1/compare/?s=Dell/1xXE9680Lx8H200-SXM-141GB&s=Dell/1xXE9680Lx8B200-SXM-180GB",
    "round feed": "/feeds/rounds/training-v5.1/",
    "API docs": "/api/docs/",
    "API, browsable": "/api/v1/results/?round=training-v5.1",
    "API, JSON": "/api/v1/rounds/?format=json",
    "login": "/accounts/login/",
    "upload": "/submissions/upload/",
    "favicon": "/favicon.ico",
}


@pytest.fixture(autouse=True)
def catalogue_media(request, settings):
    """The bundles' folder of the shared rounds, for the log pages."""
    settings.MEDIA_ROOT = request.getfixturevalue("shared_catalogue")


def organisation_page() -> dict[str, str]:
    """The organisation page, where the portal has one (issue 39 item 3)."""
    try:
        return {"organisation": reverse("leaderboard:organisation", args=["Dell"])}
    except NoReverseMatch:
        return {}


def test_no_page_writes_an_error_in_the_console(live_server, browser):
    d = browser
    d.set_window_size(1400, 900)
    errors = {}
    for name, path in {**PAGES, **organisation_page()}.items():
        d.get_log("browser")  # what the page before left
        open_page(d, live_server.url + path)
        if d.execute_script("return document.querySelector('script[data-chart]') !== null"):
            charts_drawn(d)  # plotly.js loads, draws and may complain
        if name == "API docs":  # Redoc draws the schema (and its logo) after the page has loaded
            wait(
                d,
                lambda d: "/api/v1/results/" in d.execute_script("return document.body.innerText"),
            )
        severe = [e["message"] for e in d.get_log("browser") if e["level"] == "SEVERE"]
        if severe:
            errors[name] = severe
    assert not errors, errors
