"""The readers' tasks of issue 39, each done as a reader would in a real browser at a desktop's 1400 px and a
phone's 390 px, on the shared rounds: the answer is asserted against the catalogue, and every element the task
clicks or reads is inside the screen without a sideways scroll (the page's or a box's). Each task counts its
clicks and page loads; the counts are printed at the end (the issue's closing note).

BERT ran in v1.0 and v4.0 only: `bert_rounds` ingests their BERT results, of the organisations that ran it in
both (no other can be compared), once for this module."""

import csv
import os
import subprocess
import tarfile
import time

import pytest
from django.core.management import call_command
from selenium.common.exceptions import TimeoutException, WebDriverException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.expected_conditions import staleness_of
from selenium.webdriver.support.ui import Select

from ..conftest import SHARED
from .pages import DESKTOP, PHONE, open_page, query, settled, wait

pytestmark = [pytest.mark.shared_rounds, pytest.mark.browser]
WIDTHS = {"desktop": DESKTOP, "phone": PHONE}
LORA = "llama2_70b_lora"
COUNTS: dict[tuple[str, str], tuple[int, int]] = {}  # (task, width) -> (clicks, page loads)

# Where an element is, once the page is scrolled up or down to it (never sideways): inside the screen, and
# not cut off by a box it sits in; and whether the page or a box around it is scrolled sideways.
PLACE = """var el = arguments[0];
el.scrollIntoView({block: 'center', inline: 'nearest'});
var r = el.getBoundingClientRect();
var out = {left: r.left, right: r.right, top: r.top, bottom: r.bottom, width: window.innerWidth,
           height: window.innerHeight, pageX: window.scrollX, scrolled: [], clipped: []};
for (var a = el.parentElement; a; a = a.parentElement) {
  if (a.scrollLeft > 0) out.scrolled.push(a.tagName + '.' + a.className);
  var s = getComputedStyle(a);
  if (s.overflowX !== 'visible') {
    var b = a.getBoundingClientRect();
    if (r.left < b.left - 1 || r.right > b.right + 1) out.clipped.push(a.tagName + '.' + a.className);
  }
}
return out;"""


# Before a click: note on the window when the page starts to leave. After it: whether it did, once the
# tasks the click queued (a form's submission is one) have run: two timers of 50 ms, one after the other.
WATCH_LEAVING = """window.__leaving = false;
addEventListener('beforeunload', function () { window.__leaving = true; }, {once: true});"""
LEAVING = """var done = arguments[arguments.length - 1];
setTimeout(function () { setTimeout(function () { done(window.__leaving === true); }, 50); }, 50);"""


class Task:
    """One reader task at one width: opens pages, clicks and reads, counting clicks and page loads, and
    asserting that what it clicks or reads can be reached without a sideways scroll."""

    def __init__(self, driver, live_server, name: str, width: str):
        self.d, self.base, self.name, self.width = driver, live_server.url, name, width
        self.clicks = self.loads = 0

    def open(self, path: str):
        open_page(self.d, self.base + path)
        self.loads += 1

    def _count_load(self, before):
        """A click that loaded a page leaves its document behind (`before`, its root, goes stale). Whether
        it started to leave is known at once: a link's page has loaded when the click returns, the page
        fires beforeunload when a navigation starts, and a form's submission starts one in a task after
        the click returns, which LEAVING waits out. Only then is the new page waited for; a click that
        stays on the page costs a tenth of a second, not the 1.5 s every click waited before. A
        navigation that answers with a download (a CSV) starts and never unloads: it counts no load."""
        if not staleness_of(before)(self.d):  # a link's page: loaded before the click returned
            try:
                leaving = self.d.execute_async_script(LEAVING)
            except WebDriverException:  # the document went away while the script waited
                leaving = True
            if not leaving and not staleness_of(before)(self.d):  # (or it loaded meanwhile)
                return
        try:
            wait(self.d, staleness_of(before))
        except TimeoutException:
            return
        wait(self.d, lambda d: d.execute_script("return document.readyState") == "complete")
        self.loads += 1

    def reach(self, element, what: str):
        place = self.d.execute_script(PLACE, element)
        inside = (
            place["left"] >= -1
            and place["right"] <= place["width"] + 1
            and place["top"] >= 0
            and place["bottom"] <= place["height"]
            and place["right"] > place["left"]
        )
        sideways = place["pageX"] or place["scrolled"] or place["clipped"]
        assert inside and not sideways, (
            f"{self.name} at {self.width}: {what} is out of reach: {place}"
        )
        return element

    def click(self, element, what: str):
        before = self.d.find_element(By.TAG_NAME, "html")
        self.d.execute_script(WATCH_LEAVING)
        self.reach(element, what).click()
        self.clicks += 1
        self._count_load(before)

    def choose(self, select, value: str, what: str):
        Select(self.reach(select, what)).select_by_value(value)
        self.clicks += 1

    def read(self, element, what: str) -> str:
        return self.reach(element, what).text

    def done(self):
        COUNTS[(self.name, self.width)] = (self.clicks, self.loads)


@pytest.fixture(autouse=True)
def catalogue_media(request, media, settings):
    """The log viewer reads the shared rounds' bundles where the catalogue keeps them."""
    settings.MEDIA_ROOT = request.getfixturevalue("shared_catalogue")


@pytest.fixture(params=list(WIDTHS))
def task(request, live_server, browser):
    browser.set_window_size(*WIDTHS[request.param])
    made = []

    def start(name):
        made.append(Task(browser, live_server, name, request.param))
        return made[-1]

    yield start
    for t in made:
        t.done()
    browser.set_window_size(*DESKTOP)


@pytest.fixture(scope="module", autouse=True)
def report():
    yield
    if COUNTS:
        print("\nreader tasks: clicks and page loads (desktop | phone)")
        for name in dict.fromkeys(n for n, _ in COUNTS):
            cells = [COUNTS.get((name, w)) for w in WIDTHS]
            print(
                f"  {name}: "
                + " | ".join(f"{c[0]} clicks, {c[1]} loads" if c else "-" for c in cells)
            )


@pytest.fixture(scope="module")
def catalogue(shared_catalogue, django_db_blocker):
    """Query the package's catalogue (the browser tests' database) for the answers."""

    class Reader:
        def __call__(self, fn):
            with django_db_blocker.unblock():
                return fn()

    return Reader()


# --- the tasks --------------------------------------------------------------------------------


def test_the_fastest_llama2_70b_lora_with_its_accelerator_count(task, catalogue, request):
    from leaderboard.access import public

    phone = request.node.callspec.params["task"] == "phone"
    best = catalogue(
        lambda: (
            public.results()
            .filter(system__round__key="training-v5.1", benchmark__key=LORA, score_s__isnull=False)
            .select_related("system")
            .order_by("score_s")
            .first()
        )
    )
    t = task("fastest llama2_70b_lora")
    t.open("/r/training-v5.1/")
    if phone:
        # On a phone the benchmark columns past the first are a swipe away: the reader picks the benchmark in
        # the filters, and one benchmark shown is sorted fastest first.
        t.click(t.d.find_element(By.CSS_SELECTOR, "#filters-fold summary"), "the filters")
        t.choose(t.d.find_element(By.ID, "id_benchmark"), LORA, "the benchmark")
        wait(t.d, lambda d: query(d).get("benchmark") == [LORA])
    else:
        t.click(
            t.d.find_element(By.CSS_SELECTOR, f"#results th a[data-key={LORA}]"), "the LoRA header"
        )
        wait(t.d, lambda d: query(d).get("sort") == [f"b.{LORA}"])
    settled(t.d)
    first = t.d.find_element(By.CSS_SELECTOR, "#results tbody tr[data-system]")
    minutes = t.read(first.find_element(By.CSS_SELECTOR, f"td a[href*='/{LORA}/']"), "its time")
    assert float(minutes.replace(",", "")) == round(best.score_s / 60, 2)
    if phone:  # under the system's name, where the Accelerator column is a swipe away
        cell = first.find_element(By.CSS_SELECTOR, "th.sys .acc")
    else:
        heads = [
            th.get_attribute("textContent").replace("\u00ad", "").strip()
            for th in t.d.find_elements(By.CSS_SELECTOR, "#results table thead th")
        ]
        at = next(i for i, h in enumerate(heads) if h.startswith("Accelerator"))
        cell = first.find_elements(By.XPATH, "./th|./td")[at]
    accelerators = t.read(cell, "its accelerators")
    assert f"{best.system.accelerator_count} ×" in accelerators


def test_mi355x_against_b200_at_8_accelerators(task, catalogue):
    from leaderboard.access import public
    from leaderboard.catalogue.accelerators import family_of

    def fastest():
        out = {}
        scored = public.results().filter(
            system__round__key="training-v5.1",
            benchmark__key=LORA,
            score_s__isnull=False,
            system__accelerator_count=8,
        )
        for r in scored.select_related("system"):
            family = family_of(r.system.accelerator_model)
            if family in ("AMD MI355X", "NVIDIA B200") and r.score_s < out.get(family, 1e18):
                out[family] = r.score_s
        return out

    expected = catalogue(fastest)
    assert set(expected) == {"AMD MI355X", "NVIDIA B200"}
    t = task("MI355X vs B200 at 8")
    t.open("/r/training-v5.1/")
    t.click(t.d.find_element(By.CSS_SELECTOR, "#filters-fold summary"), "the filters")
    for family in expected:
        box = t.d.find_element(By.CSS_SELECTOR, f"#list-accelerator input[value='family:{family}']")
        t.click(box, f"the {family} box")
        wait(t.d, lambda d, f=family: f"family:{f}" in query(d).get("accelerator", []))
        settled(t.d)
    for field in ("id_acc_min", "id_acc_max"):
        box = t.d.find_element(By.ID, field)
        t.click(box, "an accelerator count")
        box.send_keys("8")
    wait(t.d, lambda d: query(d).get("acc_min") == ["8"] and query(d).get("acc_max") == ["8"])
    settled(t.d)
    t.click(t.d.find_element(By.CSS_SELECTOR, f"#results th a[data-key={LORA}]"), "the LoRA header")
    wait(t.d, lambda d: query(d).get("sort") == [f"b.{LORA}"])
    settled(t.d)
    seen = {}
    for row in t.d.find_elements(By.CSS_SELECTOR, "#results tbody tr[data-system]"):
        text = row.get_attribute("textContent")
        family = next((f for f in expected if f.split()[-1] in text), None)
        if family and family not in seen:
            cell = row.find_element(By.CSS_SELECTOR, f"td a[href*='/{LORA}/']")
            seen[family] = float(t.read(cell, f"the fastest {family}").replace(",", ""))
    assert seen == {f: round(s / 60, 2) for f, s in expected.items()}


def test_the_best_resnet_50_of_v05_against_v06(task, catalogue):
    from leaderboard.access import public

    def best(round_key):
        return (
            public.results()
            .filter(
                system__round__key=round_key,
                benchmark__key="resnet",
                system__division="closed",
                score_s__isnull=False,
            )
            .order_by("score_s")
            .values_list("score_s", flat=True)
            .first()
        )

    expected = catalogue(lambda: {r: best(f"training-{r}") for r in ("v0.5", "v0.6")})
    t = task("best ResNet-50 v0.5 vs v0.6")
    t.open("/")
    t.click(t.d.find_element(By.CSS_SELECTOR, "header.site a[href='/progress/']"), "Progress")
    found = {}
    for round_name in expected:
        row = t.d.find_element(
            By.XPATH,
            f"//tr[th[@title='Key: resnet']][td/a[normalize-space()='Training {round_name}']]",
        )
        found[round_name] = float(t.read(row.find_element(By.XPATH, "./td[2]"), "its best"))
    assert found == {r: round(s / 60, 2) for r, s in expected.items()}
    assert found["v0.6"] < found["v0.5"]


def test_run_stop_in_a_v51_log(task):
    t = task("run_stop in a v5.1 log")
    t.open("/r/training-v5.1/?submitter=Dell&benchmark=rgat")
    first = t.d.find_element(By.CSS_SELECTOR, "#results tbody tr[data-system] td a[href*='/rgat/']")
    t.click(first, "a result")
    t.click(t.d.find_element(By.CSS_SELECTOR, "a[data-run-log='0']"), "the first run's log")
    t.click(t.d.find_element(By.CSS_SELECTOR, "a[data-jump='run_stop']"), "the jump to run_stop")
    line = t.d.find_element(By.CSS_SELECTOR, ".log .ln.target")
    assert '"key": "run_stop"' in line.get_attribute("textContent")
    # What the reader reads: the line's number and its key, at the start of a line that may run on.
    t.read(line.find_element(By.CSS_SELECTOR, "a.no"), "the line's number")
    key = line.find_element(By.XPATH, ".//span[contains(., 'run_stop')]")
    assert "run_stop" in t.read(key, "the run_stop key")


def test_the_v51_csv(task, catalogue):
    from leaderboard.access import public

    systems = catalogue(
        lambda: (
            public.results()
            .filter(system__round__key="training-v5.1")
            .values("system_id")
            .distinct()
            .count()
        )
    )
    t = task("the v5.1 CSV")
    t.open("/r/training-v5.1/")
    for old in t.d.downloads.glob("*"):
        old.unlink()
    t.click(t.d.find_element(By.CSS_SELECTOR, "a[data-export=csv]"), "the CSV link")
    path = wait(t.d, lambda d: next(iter(d.downloads.glob("*.csv")), None), message="no CSV")
    wait(t.d, lambda d: path.stat().st_size > 0 and not list(d.downloads.glob("*.crdownload")))
    with open(path, newline="") as f:
        records = list(csv.DictReader(f))
    assert {"Public ID", "Organization", "System Name", "# of Accelerators"} <= set(records[0])
    assert len(records) == systems


@pytest.fixture(scope="module")
def bert_rounds(shared_catalogue, django_db_blocker, tmp_path_factory):
    """v1.0's and v4.0's BERT results of the organisations that ran BERT in both rounds, ingested and
    published by a real worker (in this process where PostgreSQL and Redis do not answer)."""
    from django.test.utils import override_settings

    from leaderboard.catalogue.organisations import organisation_of
    from portal.celery import app

    from ..worker import Worker, purge_broker, services_missing

    trees = {}
    for key in ("v1.0", "v4.0"):
        tarball = SHARED / f"training_{key}_results.tar.xz"
        if not tarball.is_file():
            pytest.skip(f"{tarball} is not here (set MLPERF_SHARED_DIR)")
        out = tmp_path_factory.mktemp(f"bert-{key}")
        subprocess.run(
            ["tar", "-xJf", str(tarball), "-C", str(out), "--wildcards"]
            + ["*/systems/*", "*/results/*/bert/*"],
            check=True,
        )
        trees[key] = out
    with_bert = {
        key: {p.parts[-4] for p in tree.glob("*/results/*/bert")} for key, tree in trees.items()
    }
    both = {organisation_of(n) for n in with_bert["v1.0"]} & {
        organisation_of(n) for n in with_bert["v4.0"]
    }
    started = time.monotonic()
    eager = app.conf.task_always_eager
    with django_db_blocker.unblock(), override_settings(MEDIA_ROOT=shared_catalogue):
        worker = None
        if services_missing() is None:
            purge_broker()
            worker = Worker(shared_catalogue, concurrency=2, name="bert")
            app.conf.task_always_eager = False
        try:
            for key, tree in trees.items():
                bundle = tree.with_suffix(".tar")
                with tarfile.open(bundle, "w") as tar:
                    for folder in sorted(with_bert[key]):
                        if organisation_of(folder) in both:
                            tar.add(tree / folder, arcname=folder)
                call_command(
                    "ingest",
                    str(bundle),
                    "--round",
                    f"training-{key}",
                    "--publish",
                    "--wait",
                    "--timeout",
                    "900",
                    stdout=open(os.devnull, "w"),
                )
        finally:
            app.conf.task_always_eager = eager
            if worker is not None:
                worker.stop()
    print(f"\nbrowser tests: ingested BERT of {sorted(both)} in {time.monotonic() - started:.0f} s")
    return both


def test_who_improved_most_on_bert_between_two_rounds_at_equal_scale(task, catalogue, bert_rounds):
    from leaderboard.access import public

    def most_improved():
        """The organisation whose fastest BERT at one accelerator count gained most from v1.0 to v4.0."""
        fastest = {}
        scored = public.results().filter(
            benchmark__key="bert", system__division="closed", score_s__isnull=False
        )
        for round_key, org, count, score in scored.values_list(
            "system__round__key",
            "system__submitter__organisation",
            "system__accelerator_count",
            "score_s",
        ):
            key = (round_key, org, count)
            fastest[key] = min(score, fastest.get(key, score))
        gains = {
            (org, count): score / fastest[("training-v4.0", org, count)]
            for (round_key, org, count), score in fastest.items()
            if round_key == "training-v1.0" and ("training-v4.0", org, count) in fastest
        }
        return max(gains.items(), key=lambda kv: kv[1])

    (organisation, count), gain = catalogue(most_improved)
    t = task("who improved most on BERT")
    t.open("/")
    t.click(t.d.find_element(By.CSS_SELECTOR, "header.site a[href='/progress/']"), "Progress")
    t.choose(t.d.find_element(By.ID, "id_benchmark"), "bert", "the benchmark")
    t.click(t.d.find_element(By.CSS_SELECTOR, "#between button[type=submit]"), "Compare")
    assert Select(t.d.find_element(By.ID, "id_from")).first_selected_option.text == "Training v1.0"
    assert Select(t.d.find_element(By.ID, "id_to")).first_selected_option.text == "Training v4.0"
    t.click(t.d.find_element(By.CSS_SELECTOR, "#between a[data-sort-gain]"), "sort by gain")
    first = t.d.find_element(By.CSS_SELECTOR, "#matched tbody tr")
    assert t.read(first.find_element(By.TAG_NAME, "th"), "the most improved") == organisation
    assert first.get_attribute("data-accelerators") == str(count)
    shown = t.read(first.find_element(By.CSS_SELECTOR, "td[data-gain]"), "its gain")
    assert shown == f"{gain:.2f}×"


def test_a_filtered_view_shared_by_url(task):
    t = task("a filtered view shared by URL")
    t.open("/r/training-v5.1/")
    t.click(t.d.find_element(By.CSS_SELECTOR, "#filters-fold summary"), "the filters")
    badge = t.d.find_element(By.ID, "filters-active")
    assert not badge.is_displayed()
    dell_h200 = t.d.find_element(
        By.CSS_SELECTOR, "#list-accelerator input[value='family:NVIDIA H200']"
    )
    before = dell_h200.find_element(By.XPATH, "..").text
    t.click(t.d.find_element(By.CSS_SELECTOR, "#list-submitter input[value='Dell']"), "Dell")
    wait(t.d, lambda d: query(d).get("submitter") == ["Dell"])
    settled(t.d)
    # No reload: the badge and the other filters' counts changed in place.
    assert t.loads == 1 and t.read(badge, "the badge") == "1 active"
    after = dell_h200.find_element(By.XPATH, "..").text
    assert after != before, (before, after)
    shared = t.d.current_url
    rows = [
        r.get_attribute("data-system")
        for r in t.d.find_elements(By.CSS_SELECTOR, "#results tr[data-system]")
    ]
    t.open(shared.removeprefix(t.base))  # the link, opened afresh
    chip = t.d.find_element(By.CSS_SELECTOR, "#results [data-chips] a[data-chip-name=submitter]")
    assert "Dell" in t.read(chip, "the filter's chip")
    again = [
        r.get_attribute("data-system")
        for r in t.d.find_elements(By.CSS_SELECTOR, "#results tr[data-system]")
    ]
    assert again == rows and rows
    assert t.d.find_element(By.ID, "filters-active").get_attribute("textContent") == "1 active"


def test_three_systems_compared(task):
    t = task("three systems compared")
    t.open(f"/r/training-v5.1/?benchmark={LORA}&accelerator=family:NVIDIA+B200")
    boxes = t.d.find_elements(By.CSS_SELECTOR, "#results input[name=s]")[:3]
    picked = [b.get_attribute("value") for b in boxes]
    for box in boxes:
        t.click(box, "a compare box")
    button = t.d.find_element(By.CSS_SELECTOR, "[data-compare-button]")
    wait(t.d, lambda d: button.is_enabled())
    t.click(button, "Compare")
    wait(t.d, lambda d: "/compare/" in d.current_url)
    assert query(t.d)["s"] == picked
    # A phone shows each system as a card (its cells, each labelled with the system), a desktop as a column.
    if t.width == "phone":
        names = t.d.find_elements(By.CSS_SELECTOR, "table.compare tbody tr:first-child td")
    else:
        names = t.d.find_elements(By.CSS_SELECTOR, "table.compare thead th a")
    assert len(names) == 3
    for name in names:
        t.read(name, "a compared system")
    cells = t.d.find_elements(By.CSS_SELECTOR, "table.compare tbody td")
    assert any("vs baseline" in c.text or "same" in c.text for c in cells)
    # The baseline is chosen by name.
    other = t.d.find_element(By.CSS_SELECTOR, "[data-baselines] a")
    chosen = other.text
    t.click(other, "another baseline")
    assert t.d.find_element(By.CSS_SELECTOR, "[data-baselines] strong").text == chosen


def test_why_a_result_was_not_scored(task, catalogue):
    from leaderboard.access import public

    unscored = catalogue(
        lambda: (
            public.results()
            .filter(system__round__key="training-v5.1", score_s__isnull=True)
            .exclude(score_message="")
            .select_related("system__submitter", "benchmark")
            .order_by("system__submitter__name", "system__key", "benchmark__position")
            .first()
        )
    )
    assert unscored is not None, "v5.1 has no public result without a score"
    t = task("why a result was not scored")
    system = unscored.system
    t.open(
        f"/r/training-v5.1/?benchmark={unscored.benchmark.key}&submitter={system.submitter.organisation}"
    )
    row = t.d.find_element(
        By.CSS_SELECTOR, f"#results tr[data-system='{system.submitter.name}/{system.key}']"
    )
    why = t.read(row.find_element(By.CSS_SELECTOR, "td .why"), "the reason in the cell")
    reason = unscored.score_message
    assert why == reason or (why.endswith("…") and reason.startswith(why[:-1])), (why, reason)
    t.click(row.find_element(By.CSS_SELECTOR, "td a .not-scored"), "not scored")
    facts = t.d.find_element(By.XPATH, "//dl[@class='facts']/dd[contains(., 'not scored:')]")
    assert unscored.score_message in t.read(facts, "the reason on the result's page")
