"""The round table in a real browser, on the three shared rounds: filters change the table and
the charts, the permalink reloads the same view, sorting, units, compare, the CSV equals the
table, a phone-width layout, and the detail pages' charts."""

import csv
import time

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from .conftest import screenshot
from .pages import charts_drawn, open_filters, open_page, query, rows, settled, wait

pytestmark = [pytest.mark.shared_rounds, pytest.mark.browser]


def cell_text(td):
    """The number a cell shows (its link's text), without the marks beside it."""
    links = td.find_elements(By.TAG_NAME, "a")
    return links[0].text.strip() if links else td.text.strip()


def table(driver):
    """[(system, [numeric cell texts])] as shown."""
    out = []
    for tr in driver.find_elements(By.CSS_SELECTOR, "#results tr[data-system]"):
        name = tr.find_element(By.CSS_SELECTOR, "th[scope=row] a[data-name]").text
        out.append((name, [cell_text(td) for td in tr.find_elements(By.CSS_SELECTOR, "td.num")]))
    return out


def test_filters_change_the_table_and_the_charts_and_the_permalink_reloads_the_same_view(
    live_server, browser
):
    d = browser
    open_page(d, f"{live_server.url}/r/training-v5.1/")
    everything = rows(d)
    assert len(everything) > 50
    before = charts_drawn(d)
    screenshot(d, "01-round-v5.1")

    open_filters(d)
    d.find_element(By.CSS_SELECTOR, "#list-submitter input[value='NVIDIA']").click()
    wait(
        d, lambda d: query(d).get("submitter") == ["NVIDIA"], message="the address has no submitter"
    )
    settled(d)
    nvidia = rows(d)
    assert nvidia and len(nvidia) < len(everything) and all(r.startswith("NVIDIA/") for r in nvidia)
    after = charts_drawn(d)
    assert after["chart-scaling"] < before["chart-scaling"]

    search = d.find_element(By.ID, "id_q")
    search.send_keys("GB200")
    wait(d, lambda d: query(d).get("q") == ["GB200"])
    settled(d)
    wait(d, lambda d: len(rows(d)) < len(nvidia))
    filtered = rows(d)
    assert filtered and all(
        "GB200" in tr.text for tr in d.find_elements(By.CSS_SELECTOR, "#results tr[data-system]")
    )
    assert "matching the filters" in d.find_element(By.CSS_SELECTOR, "[data-summary]").text
    charts_drawn(d)
    screenshot(d, "02-round-v5.1-filtered")

    permalink = d.current_url
    shown = table(d)
    open_page(d, permalink)
    assert rows(d) == filtered and table(d) == shown
    assert d.find_element(By.ID, "id_q").get_attribute("value") == "GB200"
    selected = [
        box.get_attribute("value")
        for box in d.find_elements(By.CSS_SELECTOR, "#list-submitter input:checked")
    ]
    assert selected == ["NVIDIA"]


def test_sorting_by_a_column_with_the_mouse_and_the_keyboard(live_server, browser):
    d = browser
    open_page(d, f"{live_server.url}/r/training-v5.1/?division=closed&category=onprem")
    header = d.find_element(By.XPATH, "//th[@scope='col']/a[@data-key='llama2_70b_lora']")
    column = [a.text for a in d.find_elements(By.XPATH, "(//table)[1]//th[@scope='col']")].index(
        header.find_element(By.XPATH, "..").text
    )
    header.click()
    wait(d, lambda d: query(d).get("sort") == ["b.llama2_70b_lora"])
    settled(d)

    def values():
        out = []
        for tr in d.find_elements(By.CSS_SELECTOR, "#results table tbody tr"):
            cells = tr.find_elements(By.XPATH, "./td|./th")
            text = cell_text(cells[column])
            number = text.replace(",", "")
            # A result without a score ("not scored") has no value: it sorts with the blanks.
            out.append(float(number) if number[:1].isdigit() else None)
        return out

    ascending = values()
    numbers = [v for v in ascending if v is not None]
    assert numbers == sorted(numbers) and len(numbers) > 5
    assert ascending[: len(numbers)] == numbers  # blanks last
    th = d.find_element(By.XPATH, "//th[@scope='col'][a[@data-key='llama2_70b_lora']]")
    assert th.get_attribute("aria-sort") == "ascending"

    link = d.find_element(By.XPATH, "//th[@scope='col']/a[@data-key='llama2_70b_lora']")
    link.send_keys(Keys.ENTER)  # keyboard: a second press reverses
    wait(d, lambda d: query(d).get("sort") == ["-b.llama2_70b_lora"])
    settled(d)
    descending = [v for v in values() if v is not None]
    assert descending == sorted(numbers, reverse=True)
    screenshot(d, "03-round-v5.1-sorted", full_page=False)


def test_toggling_between_speedups_and_minutes(live_server, browser):
    d = browser
    open_page(d, f"{live_server.url}/r/training-v0.5/")
    row = "//tr[@data-system='Google Inc./cloud_v2.8']"
    resnet_col = 1  # resnet is the round's first benchmark: the first numeric cell

    def cell():
        return cell_text(
            d.find_element(By.XPATH, row).find_elements(By.CSS_SELECTOR, "td.num")[resnet_col - 1]
        )

    assert cell() == "301.58"  # minutes first
    d.find_element(By.CSS_SELECTOR, "input[name=show][value=speedup]").click()
    wait(d, lambda d: query(d).get("show") == ["speedup"])
    settled(d)
    assert cell() == "29.28×"
    units = {u.text for u in d.find_elements(By.CSS_SELECTOR, "#results thead th.bench .unit")}
    assert units == {"×"}  # one unit in the table: benchmarks without a reference time left out
    charts_drawn(d)
    screenshot(d, "04-round-v0.5-speedups")
    caption = d.find_element(By.CSS_SELECTOR, "#results caption").get_attribute("textContent")
    assert "speedup" in caption


def test_comparing_two_systems_from_the_table(live_server, browser):
    d = browser
    open_page(d, f"{live_server.url}/r/training-v5.1/?submitter=NVIDIA&benchmark=llama2_70b_lora")
    boxes = d.find_elements(By.CSS_SELECTOR, "#results input[name=s]")[:2]
    picked = [b.get_attribute("value") for b in boxes]
    button = d.find_element(By.CSS_SELECTOR, "[data-compare-button]")
    assert not button.is_enabled()
    for box in boxes:
        box.click()
    wait(d, lambda d: d.find_element(By.CSS_SELECTOR, "[data-compare-button]").is_enabled())
    d.find_element(By.CSS_SELECTOR, "[data-compare-button]").click()
    wait(d, lambda d: "/compare/" in d.current_url)
    assert query(d)["s"] == picked
    headers = d.find_elements(By.CSS_SELECTOR, "table.compare thead th")
    assert len(headers) == 3 and "baseline" in headers[1].text
    assert "vs baseline" in d.find_element(By.CSS_SELECTOR, "table.compare").text
    charts_drawn(d)
    screenshot(d, "05-compare")


def test_the_downloaded_csv_has_the_rows_of_the_table(live_server, browser):
    d = browser
    open_page(d, f"{live_server.url}/r/training-v5.1/?division=closed&sort=-b.retinanet")
    open_filters(d)
    d.find_element(By.CSS_SELECTOR, "#list-accelerator input[type=checkbox]").click()
    settled(d)
    wait(d, lambda d: "accelerator" in query(d))
    shown = table(d)
    for old in d.downloads.glob("*"):
        old.unlink()
    d.find_element(By.CSS_SELECTOR, "a[data-export=csv]").click()
    path = wait(
        d, lambda d: next((p for p in d.downloads.glob("*.csv")), None), message="no CSV downloaded"
    )
    time.sleep(0.3)
    with open(path, newline="") as f:
        records = list(csv.DictReader(f))
    assert len(records) == len(shown) > 0
    for (name, cells), record in zip(shown, records):
        assert record["System Name"] == name
        values = [record[k] for k in record if k.endswith(("(minutes)", "(speedup)"))]
        assert [f"{float(v):,.2f}" if v else "" for v in values] == cells[: len(values)]


def test_a_phone_sized_screen_scrolls_the_table_not_the_page(live_server, browser):
    d = browser
    phone = {"width": 390, "height": 844, "deviceScaleFactor": 1, "mobile": True}
    d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", phone)
    try:
        open_page(d, f"{live_server.url}/r/training-v0.6/")
        charts_drawn(d)
        assert d.execute_script("return window.innerWidth") == 390
        assert d.execute_script("return document.documentElement.scrollWidth") <= 391
        first_table = d.find_element(By.CSS_SELECTOR, "#results .scroll")
        assert d.execute_script(
            "return arguments[0].scrollWidth > arguments[0].clientWidth", first_table
        )
        height = d.execute_script("return Math.min(document.documentElement.scrollHeight, 5000)")
        d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {**phone, "height": height})
        time.sleep(0.3)
        screenshot(d, "06-phone-round-v0.6", full_page=False)
    finally:
        d.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def test_result_system_and_progress_pages_draw_their_charts(live_server, browser):
    d = browser
    open_page(d, f"{live_server.url}/r/training-v5.1/?submitter=Dell&benchmark=rgat")
    d.find_element(By.CSS_SELECTOR, "#results td.num a").click()
    wait(d, lambda d: d.current_url.rstrip("/").endswith("rgat"))
    drawn = charts_drawn(d)
    assert drawn["chart-curves"] > 0
    assert len(d.find_elements(By.CSS_SELECTOR, "tr.dropped")) == 2
    screenshot(d, "07-result-curves")
    d.find_element(By.CSS_SELECTOR, ".crumbs a:nth-of-type(2)").click()
    wait(d, lambda d: "Results of this system" in d.page_source)
    screenshot(d, "08-system")
    open_page(d, f"{live_server.url}/progress/")
    assert charts_drawn(d)["chart-progress"] > 0
    screenshot(d, "09-progress")


def test_charts_draw_with_plotlys_rules_under_a_policy_without_inline_styles(live_server, browser):
    """style-src allowed 'unsafe-inline' for plotly.js, which makes a <style> element for its rules. The
    policy now allows no inline style (a refusal in the console fails every browser test: conftest's
    no_policy_violations), and plotly's rules still apply: they are in the site's empty stylesheet that
    charts.js gives plotly, and its mode bar floats over the chart as plotly's rule says."""
    import requests

    url = f"{live_server.url}/r/training-v5.1/"
    policy = requests.get(url, timeout=30).headers["Content-Security-Policy"]
    directives = dict(d.strip().split(" ", 1) for d in policy.split(";") if d.strip())
    assert directives["style-src"] == "'self'", policy
    open_page(browser, url)
    assert charts_drawn(browser)
    found = browser.execute_script("""
        var sheet = document.getElementById('plotly.js-style-global');
        var bar = document.querySelector('.js-plotly-plot .modebar');
        return {tag: sheet && sheet.tagName, rules: sheet && sheet.sheet ? sheet.sheet.cssRules.length : 0,
                bar: bar && getComputedStyle(bar).position,
                styles: document.querySelectorAll('style').length};""")
    assert found["tag"] == "LINK" and found["rules"] > 20, found
    assert found["bar"] == "absolute" and found["styles"] == 0, found
