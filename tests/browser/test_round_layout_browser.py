"""The round table as a reader sees it on the shared v5.1 round: scores first at 1400×900 (every
benchmark column on screen, no sideways scroll), the first row on a phone's first screen at
390×844, the header row and the system column staying put while the table scrolls, a long cell
whole on focus, and the column chooser and per-accelerator mode kept in the address."""

import re
import time

import pytest
from selenium.webdriver.common.by import By

from .conftest import screenshot
from .pages import open_filters, open_page, query, settled, wait

pytestmark = [pytest.mark.shared_rounds, pytest.mark.browser]

V51_BENCHMARKS = [
    "llama31_405b",
    "llama31_8b",
    "llama2_70b_lora",
    "flux1",
    "dlrm_dcnv2",
    "rgat",
    "retinanet",
]


@pytest.fixture
def screen(browser):
    """Set the viewport to (width, height) as a desktop or a phone; back to normal at the end."""

    def set_size(width, height):
        browser.execute_cdp_cmd(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600},
        )

    yield set_size
    browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def test_at_1400_by_900_every_benchmark_column_is_on_screen_without_sideways_scroll(
    live_server, browser, screen
):
    d = browser
    screen(1400, 900)
    open_page(d, f"{live_server.url}/r/training-v5.1/")
    assert d.execute_script("return window.innerWidth") == 1400
    headers = d.execute_script("""
        return Array.from(document.querySelectorAll('#results table')[0].querySelectorAll('th.bench a'))
          .map(function (a) { var r = a.closest('th').getBoundingClientRect();
                              return [a.dataset.key, r.left, r.right]; });""")
    assert [h[0] for h in headers] == V51_BENCHMARKS
    assert all(0 <= left and right <= 1400 for _, left, right in headers), headers
    assert d.execute_script("return document.documentElement.scrollWidth") <= 1400
    # No table scrolls sideways inside its own box either.
    wide = d.execute_script("""
        return Array.from(document.querySelectorAll('.table-wrap'))
          .filter(function (w) { return w.scrollWidth > w.clientWidth; })
          .map(function (w) { var t = w.querySelector('table');
                              return [t && t.className, w.scrollWidth, w.clientWidth]; });""")
    assert not wide, wide  # [the table's classes, its width, its box's]
    # Scores first: the first row's first score is on the first screen.
    first = d.find_element(By.CSS_SELECTOR, "#results tr[data-system] td.num a")
    rect = d.execute_script("return arguments[0].getBoundingClientRect().toJSON()", first)
    assert rect["bottom"] <= 900 and rect["right"] <= 1400
    screenshot(d, "10-round-v5.1-1400x900", full_page=False)
    # The older rounds' longer benchmark names and cloud scale column fit too.
    for key in ("training-v0.5", "training-v0.6"):
        open_page(d, f"{live_server.url}/r/{key}/")
        assert d.execute_script("return document.documentElement.scrollWidth") <= 1400, key


def test_the_header_row_stays_visible_after_scrolling(live_server, browser, screen):
    d = browser
    screen(1400, 900)
    open_page(d, f"{live_server.url}/r/training-v5.1/")
    # The closed division's one table is long: scroll the page into its middle.
    table = d.find_elements(By.CSS_SELECTOR, "#results table.leaderboard")[0]
    top = d.execute_script(
        "return arguments[0].getBoundingClientRect().top + window.scrollY", table
    )
    d.execute_script("window.scrollTo(0, arguments[0])", top + 1500)
    time.sleep(0.2)
    header = table.find_element(By.CSS_SELECTOR, "thead th.bench")
    rect = d.execute_script("return arguments[0].getBoundingClientRect().toJSON()", header)
    assert -1 <= rect["top"] <= 2, rect  # stuck to the top of the screen
    hit = d.execute_script(
        "var e = document.elementFromPoint(arguments[0], arguments[1]); return !!e.closest('thead');",
        rect["left"] + rect["width"] / 2,
        rect["top"] + rect["height"] / 2,
    )
    assert hit, "a row covers the header"
    screenshot(d, "11-round-v5.1-scrolled", full_page=False)


def test_at_390_by_844_the_filters_fold_and_the_first_row_is_on_the_first_screen(
    live_server, browser, screen
):
    d = browser
    screen(390, 844)
    open_page(d, f"{live_server.url}/r/training-v5.1/")
    assert d.execute_script("return window.innerWidth") == 390
    fold = d.find_element(By.ID, "filters-fold")
    assert (
        not fold.get_attribute("open") and not d.find_element(By.ID, "id_division").is_displayed()
    )
    first = d.find_element(By.CSS_SELECTOR, "#results tr[data-system]")
    bottom = d.execute_script("return arguments[0].getBoundingClientRect().bottom", first)
    assert bottom <= 844, bottom
    assert d.execute_script("return document.documentElement.scrollWidth") <= 391
    screenshot(d, "12-phone-round-v5.1", full_page=False)
    # The table scrolls in its own box there: the system column stays, and so does the header.
    wrap = d.find_elements(By.CSS_SELECTOR, "#results .table-wrap")[0]
    d.execute_script("arguments[0].scrollIntoView(); arguments[0].scrollBy(400, 900)", wrap)
    time.sleep(0.2)
    box = d.execute_script("return arguments[0].getBoundingClientRect().toJSON()", wrap)
    name = wrap.find_element(By.CSS_SELECTOR, "thead th.sys")
    rect = d.execute_script("return arguments[0].getBoundingClientRect().toJSON()", name)
    assert abs(rect["top"] - box["top"]) <= 2 and abs(rect["left"] - box["left"]) <= 2, (rect, box)
    screenshot(d, "13-phone-round-v5.1-scrolled", full_page=False)
    open_filters(d)
    assert d.find_element(By.ID, "id_division").is_displayed()


def test_a_long_cell_shows_its_whole_text_on_focus(live_server, browser, screen):
    d = browser
    screen(1400, 900)
    open_page(d, f"{live_server.url}/r/training-v5.1/?q=Tyche-hsg")
    cell = d.find_element(By.CSS_SELECTOR, "#results td.clip .abbr")
    short = cell.find_element(By.CSS_SELECTOR, ".s").text
    assert short.endswith("NVIDIA GB200")  # the family: what tells chips apart
    d.execute_script("arguments[0].focus()", cell)
    whole = cell.find_element(By.CSS_SELECTOR, ".f")
    assert whole.is_displayed() and whole.text.endswith("NVIDIA Blackwell GPU (GB200)")
    assert not cell.find_element(By.CSS_SELECTOR, ".s").is_displayed()


def test_the_column_chooser_and_per_accelerator_mode_survive_a_reload(live_server, browser, screen):
    d = browser
    screen(1400, 900)
    open_page(d, f"{live_server.url}/r/training-v5.1/?q=Tyche-hsg")
    d.find_element(By.CSS_SELECTOR, "input[name=show][value=acc_hours]").click()
    wait(d, lambda d: query(d).get("show") == ["acc_hours"])
    settled(d)
    open_filters(d)
    d.find_element(By.CSS_SELECTOR, "#column-chooser input[value=processor]").click()
    wait(d, lambda d: "processor" in query(d).get("cols", []))
    settled(d)
    d.find_element(By.CSS_SELECTOR, "#column-chooser input[value=software]").click()
    wait(d, lambda d: "software" not in query(d).get("cols", ["software"]))
    settled(d)
    permalink = d.current_url
    assert query(d)["cols"] == ["accelerator", "availability", "nodes", "processor"]

    d.refresh()
    wait(d, lambda d: d.execute_script("return document.readyState") == "complete")
    assert d.current_url == permalink
    headers = [th.text for th in d.find_elements(By.CSS_SELECTOR, "#results thead th:not(.bench)")]
    assert any(h.startswith("Processor") for h in headers)
    assert not any(h.startswith("Software") for h in headers)
    assert d.find_element(By.CSS_SELECTOR, "input[name=show][value=acc_hours]").is_selected()
    units = {u.text for u in d.find_elements(By.CSS_SELECTOR, "#results th.bench .unit")}
    assert units == {"acc-h"}
    assert "accelerator-hours" in d.find_element(By.CSS_SELECTOR, "[data-summary]").text
    # The number is the minutes × the accelerators ÷ 60, as its tooltip says.
    link = d.find_element(By.CSS_SELECTOR, "#results td.num a[title]")
    minutes, count = re.search(
        r"([\d,.]+) min × (\d+) accelerators", link.get_attribute("title")
    ).groups()
    expected = float(minutes.replace(",", "")) * int(count) / 60
    assert float(link.text.replace(",", "")) == pytest.approx(expected, rel=0.01)
    screenshot(d, "14-round-v5.1-per-accelerator", full_page=False)


def test_a_search_hit_on_the_home_page_lands_on_its_row(live_server, browser, screen):
    d = browser
    screen(1400, 900)
    open_page(d, f"{live_server.url}/?q=Tyche-hsg 80x")
    hit = d.find_element(By.CSS_SELECTOR, "ul.hits a")
    assert hit.text == "NVIDIA: Tyche-hsg (80x NVIDIA GB200 NVL72)"
    hit.click()
    wait(d, lambda d: "/r/training-v5.1/#row-NVIDIA--hsg_ngpu5120" in d.current_url)
    wait(d, lambda d: d.execute_script("return document.readyState") == "complete")
    row = d.find_element(By.CSS_SELECTOR, "tr:target")
    assert row.get_attribute("data-system") == "NVIDIA/hsg_ngpu5120_ngc25.09_nemo"
    top, bottom = d.execute_script(
        "var r = arguments[0].getBoundingClientRect(); return [r.top, r.bottom];", row
    )
    header = row.find_element(By.XPATH, "ancestor::table//thead")
    header_bottom = d.execute_script("return arguments[0].getBoundingClientRect().bottom", header)
    assert header_bottom <= top and bottom <= 900  # on screen, below the sticky header
    screenshot(d, "15-search-hit-row", full_page=False)
