"""The pages at a phone's width (390 px) and a desktop's (1400 px), on the shared rounds (issue 39): what a
reader's task reads or clicks is on the screen without a sideways scroll, of the page or of a box inside
it. A table's row is a card on a phone (portal.css `table.cards`), or, on the round page, the system column
stays while the box scrolls, with a line that says so. Chart titles are clear of plotly's toolbar."""

import pytest
from selenium.webdriver.common.by import By

from .conftest import screenshot
from .pages import DESKTOP, PHONE, charts_drawn, open_page

pytestmark = [pytest.mark.shared_rounds, pytest.mark.browser]

WIDTHS = {"phone": PHONE, "desktop": DESKTOP}
SYSTEM = "/r/training-v5.1/Dell/1xXE9680Lx8H200-SXM-141GB/"
RESULT = SYSTEM + "rgat/"

# Where an element is, after it is scrolled into view vertically only: inside the window and inside every
# box around it that clips (a scrolled table), and not under the round table's frozen system column.
PLACE = """
var el = arguments[0];
window.scrollTo(0, Math.max(0, el.getBoundingClientRect().top + window.scrollY - innerHeight / 3));
var r = el.getBoundingClientRect(), out = {left: r.left, right: r.right, top: r.top, bottom: r.bottom,
  width: r.width, height: r.height, innerWidth: innerWidth, innerHeight: innerHeight, clipped: null};
for (var p = el.parentElement; p; p = p.parentElement) {
  var style = getComputedStyle(p);
  if (style.overflowX === 'visible') continue;
  var b = p.getBoundingClientRect();
  if (r.left < b.left - 1 || r.right > b.right + 1) { out.clipped = p.className || p.tagName; break; }
}
return out;"""

NO_SIDEWAYS_SCROLL = "return [document.scrollingElement.scrollWidth, window.innerWidth]"


def on_screen(d, element, what):
    place = d.execute_script(PLACE, element)
    assert place["width"] > 0 and place["height"] > 0, f"{what} takes no room: {place}"
    assert place["left"] >= 0 and place["right"] <= place["innerWidth"] + 1, (
        f"{what} is off screen: {place}"
    )
    assert place["top"] >= 0 and place["bottom"] <= place["innerHeight"], (
        f"{what} is off screen: {place}"
    )
    assert place["clipped"] is None, (
        f"{what} is scrolled out of its box {place['clipped']}: {place}"
    )


def no_sideways_scroll(d, page):
    scroll_width, inner_width = d.execute_script(NO_SIDEWAYS_SCROLL)
    assert scroll_width <= inner_width, f"{page} scrolls sideways: {scroll_width} > {inner_width}"


@pytest.fixture(params=list(WIDTHS))
def sized(request, live_server, browser):
    browser.set_window_size(*WIDTHS[request.param])
    yield request.param
    browser.set_window_size(*DESKTOP)


def test_the_fastest_table_on_the_home_page_shows_each_result_with_its_accelerators(
    live_server, browser, sized
):
    d = browser
    open_page(d, live_server.url + "/")
    no_sideways_scroll(d, "the home page")
    rows = d.find_elements(By.CSS_SELECTOR, "table.fastest tbody tr")
    assert len(rows) >= 5
    headers = [
        th.get_attribute("textContent")
        for th in d.find_elements(By.CSS_SELECTOR, "table.fastest thead th")
    ]
    assert "Accelerators" in headers  # it was shown on a desktop only
    for row in rows:
        benchmark = row.find_element(By.CSS_SELECTOR, "th").text
        minutes, system, accelerators = row.find_elements(By.CSS_SELECTOR, "td")
        for cell, what in (
            (minutes, "minutes"),
            (system, "system"),
            (accelerators, "accelerators"),
        ):
            on_screen(d, cell, f"{benchmark}: {what}")
        assert "×" in accelerators.text, (
            benchmark,
            accelerators.text,
        )  # "8 × NVIDIA H200-SXM-141GB"
        on_screen(d, minutes.find_element(By.TAG_NAME, "a"), f"{benchmark}: the result's link")
    screenshot(d, f"phone-home-{sized}")


def test_the_result_page_shows_every_runs_time_and_log_link(live_server, browser, sized):
    d = browser
    open_page(d, live_server.url + RESULT)
    no_sideways_scroll(d, "the result page")
    runs = d.find_elements(By.CSS_SELECTOR, "a[data-run-log]")
    assert len(runs) >= 8
    for link in runs:
        on_screen(d, link, link.text)  # the log link was at x=467 on a 390 px screen
        row = link.find_element(By.XPATH, "./ancestor::tr")
        on_screen(d, row.find_element(By.CSS_SELECTOR, "th"), f"the file of {link.text}")
        minutes = row.find_element(By.CSS_SELECTOR, "td.num")
        if minutes.get_attribute("textContent").strip():  # a failed run has none
            on_screen(d, minutes, f"the minutes of {link.text}")
    screenshot(d, f"phone-result-{sized}")


def test_the_progress_table_shows_the_gain_and_the_holder(live_server, browser, sized):
    d = browser
    open_page(d, live_server.url + "/progress/")
    no_sideways_scroll(d, "the progress page")
    lines = d.find_elements(
        By.CSS_SELECTOR, '[aria-label="Best time per benchmark and round"] tbody tr'
    )
    assert len(lines) >= 10
    gains = 0
    for line in lines[:: max(len(lines) // 8, 1)]:

        def cell(label, line=line):
            return line.find_element(By.CSS_SELECTOR, f'td[data-label="{label}"]')

        what = f"{line.find_element(By.TAG_NAME, 'th').text} {cell('Round').text}"
        for label in ("Best minutes", "Accelerators", "Held by"):
            on_screen(d, cell(label), f"{what}: {label}")
        gain = cell("Gain per accelerator")
        if gain.text:  # none where a round has no accelerator counts
            assert gain.text.endswith("×")
            on_screen(d, gain, f"{what}: gain")
            gains += 1
    assert gains


def test_the_system_page_shows_each_result_and_its_time(live_server, browser, sized):
    d = browser
    open_page(d, live_server.url + SYSTEM)
    no_sideways_scroll(d, "the system page")
    rows = d.find_elements(By.CSS_SELECTOR, '[aria-label="Results of this system"] tbody tr')
    assert rows
    for row in rows:
        link = row.find_element(By.CSS_SELECTOR, "th a")
        on_screen(d, link, link.text)
        on_screen(
            d, row.find_element(By.CSS_SELECTOR, "td[data-label=Minutes]"), f"{link.text}'s minutes"
        )


def test_the_round_table_keeps_the_system_column_and_says_the_rest_is_a_swipe_away(
    live_server, browser, sized
):
    d = browser
    open_page(d, live_server.url + "/r/training-v5.1/")
    no_sideways_scroll(d, "the round page")  # the table's own box scrolls, not the page
    hint = d.find_element(By.CSS_SELECTOR, "p.swipe")
    row = d.find_element(By.CSS_SELECTOR, "#results tr[data-system]")
    system = row.find_element(By.CSS_SELECTOR, "th.sys a[data-name]")
    on_screen(d, system, "the first system's name")
    keys = [a.get_attribute("data-key") for a in d.find_elements(By.CSS_SELECTOR, "a[data-key]")]
    last = row.find_elements(By.CSS_SELECTOR, "td.num")[len(keys) - 1]
    if sized == "phone":
        assert hint.is_displayed() and "swipe the table sideways" in hint.text
        wrap = d.find_element(By.CSS_SELECTOR, ".table-wrap")
        assert "swipe" in d.find_element(By.ID, wrap.get_attribute("aria-describedby")).text
        accelerators = row.find_element(By.CSS_SELECTOR, "th.sys .acc")
        assert "×" in accelerators.text
        on_screen(d, accelerators, "the first system's accelerators")
        # The last benchmark's cell is reachable: scrolled to, it is on screen, clear of the frozen column.
        d.execute_script("arguments[0].scrollIntoView({block: 'center', inline: 'end'})", last)
        on_screen(d, last, f"the {keys[-1]} cell")
        frozen = d.execute_script("return arguments[0].getBoundingClientRect().right", system)
        assert d.execute_script("return arguments[0].getBoundingClientRect().left", last) >= frozen
    else:
        assert not hint.is_displayed()
        on_screen(d, last, f"the {keys[-1]} cell")
    screenshot(d, f"phone-round-{sized}", full_page=False)


def test_the_compare_page_shows_each_systems_value(live_server, browser, sized):
    d = browser
    open_page(
        d,
        live_server.url + "/r/training-v5.1/compare/?s=Dell/1xXE9680Lx8H200-SXM-141GB"
        "&s=Dell/1xXE9680Lx8B200-SXM-180GB&s=Lenovo/SR780aV3-8xB200_SXM_180GB",
    )
    no_sideways_scroll(d, "the compare page")
    cells = d.find_elements(By.CSS_SELECTOR, "table.compare tbody td.num")
    assert len(cells) >= 6
    for cell in cells:
        if cell.text:
            on_screen(d, cell, cell.get_attribute("data-label"))


def test_chart_titles_are_clear_of_the_toolbar(live_server, browser, sized):
    d = browser
    open_page(d, live_server.url + RESULT)
    drawn = charts_drawn(d)
    assert "chart-curves" in drawn
    for chart in drawn:
        d.execute_script(
            "arguments[0].scrollIntoView({block: 'center'})", d.find_element(By.ID, chart)
        )
        title, bar, box = d.execute_script(
            """var c = document.getElementById(arguments[0]);
            function rect(e) { var r = e && e.getBoundingClientRect();
              return r && {left: r.left, right: r.right, top: r.top, bottom: r.bottom}; }
            return [rect(c.querySelector('.gtitle')), rect(c.querySelector('.modebar')), rect(c)];""",
            chart,
        )
        assert title and bar, (chart, title, bar)
        apart = (
            title["bottom"] <= bar["top"]
            or title["top"] >= bar["bottom"]
            or title["right"] <= bar["left"]
        )
        assert apart, f"{chart}: the title {title} runs under the toolbar {bar}"
        assert box["left"] - 1 <= title["left"] and title["right"] <= box["right"] + 1, (
            chart,
            title,
            box,
        )


def test_the_organisation_page_shows_each_best_time_with_its_accelerators(
    live_server, browser, sized
):
    d = browser
    open_page(d, live_server.url + "/organisations/NVIDIA/")
    no_sideways_scroll(d, "the organisation page")
    lines = d.find_elements(By.CSS_SELECTOR, "#best tbody tr")
    assert len(lines) >= 5
    for line in lines[:: max(len(lines) // 8, 1)]:
        what = f"{line.get_attribute('data-bench')} {line.get_attribute('data-round')}"
        for label in ("Best minutes", "Accelerators"):
            on_screen(
                d,
                line.find_element(By.CSS_SELECTOR, f'td[data-label="{label}"]'),
                f"{what}: {label}",
            )
    for link in d.find_elements(By.CSS_SELECTOR, "section table.cards td a")[:10]:
        on_screen(d, link, link.text)
