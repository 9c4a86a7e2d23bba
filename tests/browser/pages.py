"""What the browser tests do on a page, for every module of them: open it and wait (open_page, wait),
wait for its charts (charts_drawn) or its table (settled), read the table's rows and the address's
query (rows, query), unfold the filters (open_filters), tell whether an element is in view (in_view),
and run axe-core's accessibility check (axe_violations); the two window sizes (DESKTOP, PHONE)."""

from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

AXE = Path(__file__).resolve().parent / "axe" / "node_modules" / "axe-core" / "axe.min.js"
DESKTOP = (1400, 900)
PHONE = (390, 844)


# How often a wait asks again. Selenium's default is every 0.5 s: most waits here hold for a few
# milliseconds of the page's own work, and paid up to half a second each.
POLL_S = 0.05


def wait(driver, condition, timeout=20, message=""):
    return WebDriverWait(driver, timeout, poll_frequency=POLL_S).until(
        lambda d: condition(d), message
    )


def open_page(driver, url):
    driver.get(url)
    wait(driver, lambda d: d.execute_script("return document.readyState") == "complete")


def charts_drawn(driver):
    """Wait until every chart on the page is drawn; return {chart id: number of points}."""

    def drawn(d):
        # charts.js draws a chart when it comes near the screen: bring each one there.
        return d.execute_script("""
            var out = {}, all = true;
            document.querySelectorAll('script[data-chart]').forEach(function (s) {
              var el = document.getElementById(s.dataset.chart);
              if (el && !el.dataset.drawn) el.scrollIntoView({block: "center"});
              if (!el || !el.dataset.drawn || !el.data) { all = false; return; }
              out[el.id] = el.data.reduce(function (n, t) { return n + (t.x ? t.x.length : 0); }, 0);
            });
            return all ? out : null;""")

    return wait(driver, drawn, message="charts not drawn")


def open_filters(driver):
    """Unfold the filters (folded so that the table starts on the first screen)."""
    fold = driver.find_element(By.ID, "filters-fold")
    if not fold.get_attribute("open"):
        fold.find_element(By.TAG_NAME, "summary").click()


def settled(driver):
    wait(driver, lambda d: d.find_element(By.ID, "results").get_attribute("aria-busy") is None)


def rows(driver):
    return [
        tr.get_attribute("data-system")
        for tr in driver.find_elements(By.CSS_SELECTOR, "#results tr[data-system]")
    ]


def query(driver):
    return parse_qs(urlparse(driver.current_url).query)


def in_view(d, element) -> bool:
    return d.execute_script(
        "var r = arguments[0].getBoundingClientRect();"
        "return r.top >= 0 && r.bottom <= window.innerHeight && r.height > 0;",
        element,
    )


def axe_violations(d) -> list[dict]:
    if not AXE.is_file():
        pytest.fail(f"{AXE} is missing: run make setup-dev (npm installs axe-core there)")
    d.execute_script(AXE.read_text())
    d.set_script_timeout(60)
    return d.execute_async_script(
        """var done = arguments[arguments.length - 1];
        axe.run(document, {resultTypes: ['violations']}).then(function (r) {
          done(r.violations.filter(function (v) { return v.impact === 'serious' || v.impact === 'critical'; })
            .map(function (v) { return {id: v.id, impact: v.impact, help: v.help,
              nodes: v.nodes.slice(0, 3).map(function (n) { return n.target.join(' '); })}; }));
        });"""
    )
