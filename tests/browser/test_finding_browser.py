"""What a reader looks for, in a real browser on the shared rounds: a key on the last page of a long log,
found by the log's search and its jumps, read on a phone; the file itself."""

import tarfile
from pathlib import Path

import pytest
from selenium.webdriver.common.by import By

from .pages import PHONE, axe_violations, charts_drawn, in_view, open_page, wait

pytestmark = [pytest.mark.shared_rounds, pytest.mark.browser]

# Dell's H200 R-GAT, run 0: a log of about 5,000 lines (six pages), its run_stop near the end.
RESULT = "/r/training-v5.1/Dell/1xXE9680Lx8H200-SXM-141GB/rgat/"
LOG = RESULT + "log/0/"


@pytest.fixture(autouse=True)
def catalogue_media(request, media, settings):
    """The bundles' folder of the shared rounds for the live server, whose log pages read them there (as in
    test_reading_browser)."""
    if "live_server" in request.fixturenames:
        settings.MEDIA_ROOT = request.getfixturevalue("shared_catalogue")


@pytest.fixture
def run_log(django_db_blocker, shared_catalogue) -> bytes:
    """Run 0's log as the bundle holds it, read with tarfile from the stored bundle (not by the portal)."""
    from leaderboard.models import Run

    with django_db_blocker.unblock():
        run = Run.objects.select_related("result__system__submission").get(
            result__system__round__key="training-v5.1",
            result__system__submitter__name="Dell",
            result__system__key="1xXE9680Lx8H200-SXM-141GB",
            result__benchmark__key="rgat",
            index=0,
        )
        bundle = Path(shared_catalogue) / run.result.system.submission.bundle.name
    with tarfile.open(bundle) as tar:
        member = next(m for m in tar.getmembers() if m.name.lstrip("./").endswith(run.path))
        return tar.extractfile(member).read()


def test_the_log_search_finds_run_stop_on_the_last_page_of_a_long_log(
    live_server, browser, run_log
):
    lines = run_log.decode("utf-8", "replace").splitlines()
    stop = next(n for n, text in enumerate(lines, start=1) if '"key": "run_stop"' in text)
    assert len(lines) > 4000 and stop > len(lines) - 1000  # on the last page, as the issue found it
    d = browser
    d.set_window_size(1400, 900)
    open_page(d, live_server.url + LOG)
    assert (
        "run_stop" not in d.find_element(By.CSS_SELECTOR, ".log").text
    )  # page 1: Ctrl-F finds nothing
    box = d.find_element(By.ID, "log-q")
    box.send_keys("run_stop")
    box.submit()
    hit = wait(d, lambda d: d.find_elements(By.CSS_SELECTOR, "a[data-hit]"))
    assert [a.get_attribute("data-hit") for a in hit] == [str(stop)]
    assert "1 line holding" in d.find_element(By.ID, "hits-h").text
    hit[0].click()
    wait(d, lambda d: d.current_url.endswith(f"#L{stop}"))
    line = d.find_element(By.ID, f"L{stop}")
    wait(d, lambda d: in_view(d, line), message="the hit's line is not in view")
    assert line.find_element(By.CSS_SELECTOR, ".key").text == "run_stop"  # the key stands out
    assert line.find_element(By.CSS_SELECTOR, ".key").value_of_css_property("font-weight") == "700"
    assert line.find_element(By.CSS_SELECTOR, ".no").text == str(stop)

    # The jumps: run_start, run_stop and the first eval_accuracy, each to its first line in the log.
    jumps = {
        a.get_attribute("data-jump"): a.get_attribute("href").rsplit("#L", 1)[1]
        for a in d.find_elements(By.CSS_SELECTOR, "a[data-jump]")
    }
    first = {}
    for n, text in enumerate(lines, start=1):
        for key in ("run_start", "run_stop", "eval_accuracy"):
            if f'"key": "{key}"' in text:
                first.setdefault(key, n)
    assert jumps["run_start"] == str(first["run_start"]) and jumps["run_stop"] == str(stop)
    assert jumps["first eval_accuracy"] == str(first["eval_accuracy"])


def test_a_key_filter_lists_every_evaluation_of_the_log(live_server, browser, run_log):
    from selenium.webdriver.support.ui import Select

    evals = [
        n
        for n, text in enumerate(run_log.decode("utf-8", "replace").splitlines(), start=1)
        if '"key": "eval_accuracy"' in text
    ]
    d = browser
    d.set_window_size(1400, 900)
    open_page(d, live_server.url + LOG)
    Select(d.find_element(By.ID, "log-key")).select_by_value("eval_accuracy")
    d.find_element(By.CSS_SELECTOR, "form.log-find button[type=submit]").click()
    wait(d, lambda d: "key=eval_accuracy" in d.current_url)
    listed = [
        int(a.get_attribute("data-hit")) for a in d.find_elements(By.CSS_SELECTOR, "a[data-hit]")
    ]
    assert listed == evals and len(evals) > 1


def test_the_raw_file_is_the_bundles_log(live_server, browser, run_log):
    d = browser
    open_page(d, live_server.url + LOG)
    link = d.find_element(By.CSS_SELECTOR, "a[data-raw]")
    d.set_script_timeout(30)
    got = d.execute_async_script(
        """var done = arguments[arguments.length - 1];
        fetch(arguments[0]).then(function (r) { return r.arrayBuffer().then(function (b) {
          done({status: r.status, size: b.byteLength, type: r.headers.get('content-type'),
                disposition: r.headers.get('content-disposition')}); }); });""",
        link.get_attribute("href"),
    )
    assert got["status"] == 200 and got["size"] == len(run_log)
    assert got["type"].startswith("text/plain") and got["disposition"].startswith("attachment")


def test_on_a_phone_log_lines_wrap_and_line_numbers_are_big_enough_to_tap(live_server, browser):
    d = browser
    d.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": PHONE[0], "height": PHONE[1], "deviceScaleFactor": 1, "mobile": True},
    )
    try:
        open_page(d, live_server.url + LOG + "?page=2")
        log = d.find_element(By.CSS_SELECTOR, ".log")
        # nothing to scroll sideways: every line wraps inside the screen
        assert d.execute_script(
            "return arguments[0].scrollWidth <= arguments[0].clientWidth + 1", log
        )
        assert d.execute_script("return document.documentElement.scrollWidth") <= PHONE[0] + 1
        record = d.find_element(By.CSS_SELECTOR, ".log .ln.rec")
        # a record's key is on screen, not past the right edge
        key = record.find_element(By.CSS_SELECTOR, ".key")
        assert (
            d.execute_script("return arguments[0].getBoundingClientRect().right", key) <= PHONE[0]
        )
        sizes = d.execute_script(
            """return Array.from(document.querySelectorAll('.log .ln .no')).slice(0, 50).map(function (a) {
              var r = a.getBoundingClientRect(); return [r.width, r.height]; });"""
        )
        assert all(w >= 24 and h >= 24 for w, h in sizes), sizes  # WCAG 2.2's minimum target size
    finally:
        d.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def test_the_compare_tray_stays_on_screen_and_counts_the_ticked_systems(live_server, browser):
    d = browser
    d.set_window_size(1400, 900)
    open_page(d, live_server.url + "/r/training-v5.1/")
    boxes = d.find_elements(By.CSS_SELECTOR, "#results input[name=s]")
    assert len(boxes) > 30
    button = d.find_element(By.CSS_SELECTOR, "[data-compare-button]")
    for n, box in enumerate([boxes[0], boxes[-1], boxes[len(boxes) // 2]], start=1):
        d.execute_script("arguments[0].scrollIntoView({block: 'center'})", box)
        box.click()
        wait(d, lambda d, n=n: button.text == f"Compare ({n})")
        assert in_view(d, button), "the compare button is out of sight"
    d.execute_script("window.scrollTo(0, document.documentElement.scrollHeight)")  # the page's foot
    assert in_view(d, button) and button.is_enabled()
    button.click()
    wait(d, lambda d: "/compare/" in d.current_url)
    assert len(d.find_elements(By.CSS_SELECTOR, "table.compare thead th a")) == 3


def _vendor(name: str) -> str:
    """The vendor a series' name gives, read here from the names the rounds use (not by the portal's table)."""
    for word, vendor in (
        ("AMD", "AMD"),
        ("NVIDIA", "NVIDIA"),
        ("Google", "Google"),
        ("TPU", "Google"),
    ):
        if word.lower() in name.lower():
            return vendor
    return name.split()[0]


def test_no_two_vendors_share_a_colour_in_the_scaling_chart(live_server, browser):
    d = browser
    d.set_window_size(1400, 900)
    # Llama 2 70B LoRA in v5.1: AMD's MI300X, MI325X, MI350X, MI355X beside NVIDIA's H100 to GB300.
    open_page(d, live_server.url + "/r/training-v5.1/?chart=llama2_70b_lora")
    charts_drawn(d)
    traces = d.execute_script(
        """return document.getElementById('chart-scaling').data.map(function (t) {
          return {name: t.name, color: t.marker.color, symbol: t.marker.symbol}; });"""
    )
    vendors = {}
    for trace in traces:
        vendors.setdefault(trace["color"], set()).add(_vendor(trace["name"]))
    assert {"AMD", "NVIDIA"} <= set().union(*vendors.values())
    assert all(len(v) == 1 for v in vendors.values()), vendors
    assert len({t["symbol"] for t in traces}) == len(traces)  # a marker per model


# The pages of the issue beyond test_reading_browser's PUBLIC_PAGES, each at a phone's width too.
MORE_PAGES = {
    "round filtered": "/r/training-v5.1/?accelerator=family%3ANVIDIA+B200&accelerator=family%3AAMD+MI355X",
    "round v0.5 speedups": "/r/training-v0.5/?show=speedup",
    "log search": LOG + "?q=run_stop",
    "log key": LOG + "?key=eval_accuracy",
    "api docs": "/api/docs/",
}


def test_no_serious_or_critical_accessibility_violations_on_the_other_pages(live_server, browser):
    d = browser
    found = {}
    try:
        for width, height in ((1400, 900), PHONE):
            d.execute_cdp_cmd(
                "Emulation.setDeviceMetricsOverride",
                {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600},
            )
            for name, path in MORE_PAGES.items():
                open_page(d, live_server.url + path)
                if name == "api docs":
                    wait(
                        d,
                        lambda d: (
                            "/api/v1/results/" in d.execute_script("return document.body.innerText")
                        ),
                    )
                if d.find_elements(By.CSS_SELECTOR, "script[data-chart]"):
                    charts_drawn(d)
                violations = axe_violations(d)
                if violations:
                    found[f"{name} at {width}"] = violations
    finally:
        d.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    assert not found, found
