"""Reading results in a real browser, on the shared rounds: a run's log from the result page and a finding's
line link landing on its line; axe-core's accessibility check on every public page; focus outlines that
stand out (3:1); and a screenshot of every page at desktop and phone width (artifacts/screenshots/)."""

import re
from pathlib import Path
from urllib.parse import urlparse

import pytest
from selenium.webdriver.common.by import By

from .conftest import SCREENSHOTS
from .pages import DESKTOP, PHONE, axe_violations, charts_drawn, in_view, open_page, wait

pytestmark = [pytest.mark.shared_rounds, pytest.mark.browser]

# Dell's H200 rgat: run 7's log ends without run_stop, a finding on its last line (5141).
SYSTEM = "/r/training-v5.1/Dell/1xXE9680Lx8H200-SXM-141GB/"
RESULT = SYSTEM + "rgat/"
FLAGGED_RUN, FLAGGED_LINE = 7, 5141
PUBLIC_PAGES = {
    "home": "/",
    "round": "/r/training-v5.1/",
    "system": SYSTEM,
    "result": RESULT,
    "compare": "/r/training-v5.1/compare/?s=Dell/1xXE9680Lx8H200-SXM-141GB&s=Dell/1xXE9680Lx8B200-SXM-180GB",
    "progress": "/progress/",
    "round not imported": "/r/training-v2.0/",  # MLCommons' link in place of a table (issue 38)
    "log": f"{RESULT}log/{FLAGGED_RUN}/?line={FLAGGED_LINE}#L{FLAGGED_LINE}",
}


@pytest.fixture(autouse=True)
def catalogue_media(request, media, settings):
    """The bundles' folder of the shared rounds, not the test's own empty one (tests/conftest.py's media), for
    the tests in the browser. Not for the contrast test: pytest-django runs it after every test with a
    database, and asking for the catalogue there set the package up again (Chromium and the three rounds)."""
    if "live_server" in request.fixturenames:
        settings.MEDIA_ROOT = request.getfixturevalue("shared_catalogue")


def test_a_runs_log_opens_from_the_result_page_and_a_findings_line_link_lands_on_it(
    live_server, browser
):
    d = browser
    d.set_window_size(*DESKTOP)
    open_page(d, live_server.url + RESULT)
    d.find_element(By.CSS_SELECTOR, "a[data-run-log='0']").click()
    wait(d, lambda d: urlparse(d.current_url).path == f"{RESULT}log/0/")
    lines = d.find_elements(By.CSS_SELECTOR, ".log .ln")
    assert len(lines) == 1000 and lines[0].get_attribute("id") == "L1"
    assert d.find_elements(By.CSS_SELECTOR, ".log .ln.rec")  # MLPerf records picked out
    assert "Lines 1–1000 of" in d.find_element(By.CSS_SELECTOR, "nav.pages").text

    d.back()
    wait(d, lambda d: urlparse(d.current_url).path == RESULT)
    d.find_element(By.CSS_SELECTOR, "details.findings summary").click()
    link = d.find_element(
        By.XPATH, f"//a[@data-finding-link and contains(@href, '/log/{FLAGGED_RUN}/')]"
    )
    assert f"line {FLAGGED_LINE}" in link.text
    link.click()
    wait(d, lambda d: d.current_url.endswith(f"#L{FLAGGED_LINE}"))
    line = d.find_element(By.ID, f"L{FLAGGED_LINE}")
    wait(d, lambda d: in_view(d, line), message="the finding's line is not in view")
    classes = line.get_attribute("class").split()
    assert "flagged" in classes and "target" in classes
    assert "without a run_stop event" in line.text  # the finding beside its line
    plain = d.execute_script(
        "return getComputedStyle(arguments[0]).backgroundColor", lines_after(d)
    )
    assert line.value_of_css_property("background-color") != plain


def lines_after(d):
    """An unmarked line of the page, to compare the marked one with."""
    return d.find_element(By.CSS_SELECTOR, ".log .ln:not(.flagged):not(.target):not(.rec)")


def test_no_serious_or_critical_accessibility_violations_on_the_public_pages(live_server, browser):
    d = browser
    d.set_window_size(*DESKTOP)
    found = {}
    for name, path in PUBLIC_PAGES.items():
        open_page(d, live_server.url + path)
        if d.find_elements(By.CSS_SELECTOR, "script[data-chart]"):
            charts_drawn(d)  # axe also reads what plotly draws
        violations = axe_violations(d)
        if violations:
            found[name] = violations
    assert not found, found


def _rgb(css: str) -> tuple[float, ...]:
    return tuple(float(x) for x in re.findall(r"[\d.]+", css)[:4])


def _luminance(rgb) -> float:
    def channel(c):
        c /= 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(c) for c in rgb[:3])
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a, b) -> float:
    la, lb = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def test_a_round_not_imported_here_sends_readers_to_mlcommons(live_server, browser):
    d = browser
    d.set_window_size(*PHONE)
    open_page(d, live_server.url + PUBLIC_PAGES["round not imported"])
    link = d.find_element(By.CSS_SELECTOR, ".round-import a")
    assert link.get_attribute("href") == "https://github.com/mlcommons/training_results_v2.0"
    assert in_view(d, link)  # on a phone's first screen
    assert not d.find_elements(By.CSS_SELECTOR, "table, #table-filters")


def test_contrast_is_computed_as_wcag_says():
    assert round(contrast((0, 0, 0), (255, 255, 255)), 1) == 21.0
    assert round(contrast((242, 182, 0), (255, 255, 255)), 2) == 1.83  # the old yellow outline


FOCUS_TARGETS = {
    "round": ["header.site a.brand", "form.filters select", "button", "#results a", "summary"],
    "result": ["a[data-run-log]", "main a"],
    "log": [".log .ln .no", "nav.pages a"],
}


# The first element the selector finds that is shown and enabled (one script, not a round trip each).
FIRST_FOCUSABLE = """return Array.from(document.querySelectorAll(arguments[0])).find(function (e) {
  return e.checkVisibility({checkVisibilityCSS: true}) && !e.disabled && !e.closest('details:not([open])');
}) || null;"""


def test_focus_outlines_have_3_to_1_contrast_with_what_surrounds_them(live_server, browser):
    d = browser
    d.set_window_size(*DESKTOP)
    checked = 0
    for page, selectors in FOCUS_TARGETS.items():
        open_page(d, live_server.url + PUBLIC_PAGES[page])
        for selector in selectors:
            element = d.execute_script(FIRST_FOCUSABLE, selector)
            if element is None:  # e.g. filters folded away
                continue
            style = d.execute_script(
                """var el = arguments[0]; el.focus();
                var s = getComputedStyle(el), bg = 'rgba(0, 0, 0, 0)', node = el.parentElement;
                while (node) {  // the colour around the outline: the first opaque background above
                  var c = getComputedStyle(node).backgroundColor;
                  if (c !== 'rgba(0, 0, 0, 0)' && c !== 'transparent') { bg = c; break; }
                  node = node.parentElement;
                }
                return {focused: document.activeElement === el, color: s.outlineColor,
                        style: s.outlineStyle, width: parseFloat(s.outlineWidth),
                        background: bg === 'rgba(0, 0, 0, 0)' ? 'rgb(255, 255, 255)' : bg};""",
                element,
            )
            assert style["focused"], (page, selector)
            assert style["style"] != "none" and style["width"] >= 2, (page, selector, style)
            ratio = contrast(_rgb(style["color"]), _rgb(style["background"]))
            assert ratio >= 3, (page, selector, style, round(ratio, 2))
            checked += 1
    assert checked >= 6


WIDEST = "return document.documentElement.scrollWidth"
# What sticks out past the screen's edge without a scrolling box around it, for the failure message.
WIDE = """var out = [];
function clipped(e) {
  for (var a = e.parentElement; a; a = a.parentElement)
    if (getComputedStyle(a).overflowX !== 'visible') return true;
  return false;
}
document.querySelectorAll('body *').forEach(function (e) {
  if (e.getBoundingClientRect().right > window.innerWidth + 1 && !clipped(e))
    out.push(e.outerHTML.slice(0, 160));
});
return out.slice(-4);"""


def _login(d, live_server, staff):
    open_page(d, f"{live_server.url}/accounts/login/?next=/submissions/upload/")
    d.find_element(By.ID, "id_username").send_keys(staff.username)
    d.find_element(By.ID, "id_password").send_keys("pw")  # the cast's password
    d.find_element(By.CSS_SELECTOR, "main button[type=submit]").click()
    wait(d, lambda d: urlparse(d.current_url).path == "/submissions/upload/")


def _shoot(d, name: str, width: int, height: int) -> Path:
    """The page at this viewport width, as tall as its content (up to 6,000 px), as a phone or a desktop."""
    metrics = {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600}
    d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", metrics)
    if d.find_elements(By.CSS_SELECTOR, "script[data-chart]"):
        charts_drawn(d)  # scrolls each chart into view
    full = 0
    for _ in range(
        4
    ):  # sections laid out lazily (content-visibility) grow once on screen: measure again
        now = d.execute_script("return Math.min(document.documentElement.scrollHeight, 6000)")
        if now == full:
            break
        full = now
        d.execute_cdp_cmd(
            "Emulation.setDeviceMetricsOverride", {**metrics, "height": max(full, height)}
        )
    d.execute_script("window.scrollTo(0, 0)")  # a page past 6,000 px would start part-way
    path = SCREENSHOTS / f"{name}-{width}x{height}.png"
    d.save_screenshot(str(path))
    return path


def test_a_screenshot_of_every_page_at_desktop_and_phone_width(
    live_server, browser, django_db_blocker, cast
):
    from submissions.models import Submission

    d = browser
    with django_db_blocker.unblock():
        dell = Submission.objects.get(round__key="training-v5.1", submitter__name="Dell")
    pages = {**PUBLIC_PAGES}
    pages["submission"] = dell.get_absolute_url()
    pages["upload"] = "/submissions/upload/"
    _login(d, live_server, cast["staff"])
    shots = []
    try:
        for number, (name, path) in enumerate(pages.items(), start=1):
            for width, height in (DESKTOP, PHONE):
                d.execute_cdp_cmd(
                    "Emulation.setDeviceMetricsOverride",
                    {
                        "width": width,
                        "height": height,
                        "deviceScaleFactor": 1,
                        "mobile": width < 600,
                    },
                )
                open_page(d, live_server.url + path)
                if width < 600:  # nothing wider than the phone's screen but what scrolls inside
                    if d.execute_script(WIDEST) > width + 1:
                        (SCREENSHOTS / f"wide-{name}.html").write_text(d.page_source)
                    assert d.execute_script(WIDEST) <= width + 1, (name, d.execute_script(WIDE))
                shots.append(_shoot(d, f"page-{number:02d}-{name}", width, height))
    finally:
        d.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
        d.delete_all_cookies()
    assert len(shots) == 2 * len(pages) and all(p.stat().st_size > 5000 for p in shots)
