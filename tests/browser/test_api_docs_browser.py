"""The API's docs in a real browser: /api/docs/ draws the OpenAPI schema with Redoc, every file
from this site."""

import pytest
from selenium.webdriver.support.ui import WebDriverWait

from .conftest import screenshot

pytestmark = [pytest.mark.shared_rounds, pytest.mark.browser]


def test_the_api_docs_draw_the_schema_from_this_site_only(live_server, browser):
    # What the page's Content-Security-Policy refuses, recorded from the first script on.
    browser.execute_cdp_cmd(
        "Page.addScriptToEvaluateOnNewDocument",
        {
            "source": "window.refused = []; document.addEventListener("
            "'securitypolicyviolation', function (e) { window.refused.push(e.blockedURI); });"
        },
    )
    import requests

    # Its policy allowed inline scripts and styles for Redoc: its styles now carry a nonce of the answer.
    policy = requests.get(f"{live_server.url}/api/docs/", timeout=30).headers
    assert "'unsafe-inline'" not in policy["Content-Security-Policy"], policy
    browser.get(f"{live_server.url}/api/docs/")
    WebDriverWait(browser, 30).until(
        lambda d: "/api/v1/results/" in d.execute_script("return document.body.innerText"),
        "Redoc did not draw the schema's operations",
    )
    text = browser.execute_script("return document.body.innerText")
    assert "Training results portal API" in text and "public id" in text
    assert "Published results" in text or "Results:" in text  # a viewset's own description
    asked = browser.execute_script(
        "return performance.getEntriesByType('resource').map(function (e) { return e.name; })"
    )
    refused = browser.execute_script("return window.refused")
    # Redoc's sidebar asked for its makers' logo from their site, which the policy refused (an error in the
    # console): the site's copy of its bundle draws an empty image of its own there (portal/redoc.py).
    elsewhere = [url for url in asked if not url.startswith(live_server.url)]
    assert asked and not elsewhere and not refused, (asked, refused)
    logo = browser.execute_script(
        "var i = document.querySelector('a[href^=\"https://redocly.com\"] img'); return i && i.src"
    )
    assert logo and logo.startswith("data:image/svg+xml"), logo
    styled = browser.execute_script(
        "return Array.from(document.querySelectorAll('style')).map(function (s) {"
        " return [s.nonce !== '', s.sheet ? s.sheet.cssRules.length : 0]; })"
    )
    assert any(nonce and rules > 100 for nonce, rules in styled), styled  # Redoc's, by the nonce
    screenshot(browser, "api-docs", full_page=False)


def test_the_browsable_api_keeps_to_the_policy_without_inline_styles(live_server, browser):
    """DRF's browsable API wrote pygments' colours in a <style> element and floated its Filters button by
    a style attribute, which a policy without 'unsafe-inline' refuses (templates/rest_framework/api.html
    writes them otherwise). A refusal in the console fails the test (conftest's no_policy_violations)."""
    import requests

    for path in ("/api/v1/results/?round=training-v5.1", "/api/v1/systems/", "/api/v1/"):
        page = requests.get(f"{live_server.url}{path}", headers={"Accept": "text/html"}, timeout=30)
        assert "<style" not in page.text and " style=" not in page.text, path
        browser.get(f"{live_server.url}{path}")
        WebDriverWait(browser, 30).until(
            lambda d: d.execute_script("return document.readyState") == "complete"
        )
        found = browser.execute_script("""
            var filters = document.querySelector('button[data-target="#filtersModal"]');
            return {get: getComputedStyle(document.getElementById('get-form')).cssFloat,
                    filters: filters && getComputedStyle(filters).cssFloat};""")
        assert found["get"] == "right", (path, found)
        if path != "/api/v1/":
            assert found["filters"] == "right", (path, found)
