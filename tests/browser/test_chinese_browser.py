"""The portal in Simplified Chinese, in a real browser at a phone's and a desktop's width: the five things a
reader comes for (the rounds and one round's table, filtered; a result with its runs and findings; two
systems compared; progress across rounds; a run's log) and a submitter's upload to its findings. Each page
is in Chinese (<html lang="zh-hans">), keeps every text inside its box (no element whose text is clipped or
spills over, no page wider than the window), passes axe-core, and is kept as a screenshot
(artifacts/screenshots/zh-*.png).

The language is chosen as a reader does, with the header's switcher (a ?lang= link kept in a cookie); the
cookie is dropped after each test, so the package's other tests read English.
"""

import shutil
import subprocess
import tarfile
from urllib.parse import urlparse

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from submissions.synthetic.bundles import SystemSpec, write_bundle

from .conftest import screenshot
from .pages import DESKTOP, PHONE, axe_violations, charts_drawn, open_page, settled, wait

pytestmark = [pytest.mark.shared_rounds, pytest.mark.browser]

SYSTEM = "/r/training-v5.1/Dell/1xXE9680Lx8H200-SXM-141GB/"
RESULT = SYSTEM + "rgat/"
WIDTHS = {"390": PHONE, "1400": DESKTOP}

# A text box whose text does not fit: wider than its box (clipped where its overflow is hidden, spilling
# over its neighbours where it is not). Tables scroll sideways inside their own region by design (.scroll),
# and a log's lines and code keep their widths; what is hidden or inline (no box of its own) is left out.
OVERFLOWING = """
var bad = [];
var texts = 'h1,h2,h3,p,li,dt,dd,label,legend,summary,caption,figcaption,button,nav,th,td';
document.querySelectorAll(texts).forEach(function (el) {
  if (el.closest('.scroll, .table-wrap, .log, pre, code, .chart, .visually-hidden, [hidden]')) return;
  var box = el.getBoundingClientRect();
  if (!box.width || !box.height || getComputedStyle(el).display === 'inline') return;
  if (el.scrollWidth > el.clientWidth + 1) {
    bad.push(el.tagName.toLowerCase() + ' (' + el.scrollWidth + ' > ' + el.clientWidth + '): '
      + el.textContent.trim().replace(/\\s+/g, ' ').slice(0, 80));
  }
});
if (document.documentElement.scrollWidth > window.innerWidth + 1) {
  bad.push('the page: ' + document.documentElement.scrollWidth + ' > ' + window.innerWidth);
}
return bad;
"""


def _chinese_font() -> bool:
    """Whether fontconfig has a font with Chinese glyphs: without one, Chromium draws every character as an
    empty box, and neither the screenshots nor the text's widths are what a reader sees."""
    fc_list = shutil.which("fc-list")
    if fc_list is None:
        return False
    found = subprocess.run([fc_list, ":lang=zh"], capture_output=True, text=True)
    return bool(found.stdout.strip())


@pytest.fixture
def chinese(live_server, browser):
    """The browser reading in Chinese, chosen with the header's switcher; English again afterwards."""
    if not _chinese_font():
        pytest.skip("no Chinese font: apt-get install -y fonts-wqy-microhei (make setup-dev does)")
    d = browser
    d.set_window_size(*DESKTOP)
    open_page(d, live_server.url + "/")
    d.find_element(By.CSS_SELECTOR, 'nav.languages a[lang="zh-hans"]').click()
    wait(d, lambda d: d.find_element(By.TAG_NAME, "html").get_attribute("lang") == "zh-hans")
    assert d.get_cookie("lang")["value"] == "zh-hans"
    yield d
    d.delete_cookie("lang")


def check(d, name: str, width: str) -> list[str]:
    """The page at this width: in Chinese, nothing overflowing, axe clean; its screenshot kept. Returns
    what is wrong, to be asserted once every page has been seen."""
    d.set_window_size(*WIDTHS[width])
    wrong = []
    if d.find_elements(By.CSS_SELECTOR, "script[data-chart]"):
        charts_drawn(d)
    if d.find_element(By.TAG_NAME, "html").get_attribute("lang") != "zh-hans":
        wrong.append(f"{name} at {width}: not in Chinese")
    wrong += [f"{name} at {width}: {o}" for o in d.execute_script(OVERFLOWING)]
    wrong += [f"{name} at {width}: axe {v['id']} {v['nodes']}" for v in axe_violations(d)]
    screenshot(d, f"zh-{name}-{width}")
    return wrong


@pytest.mark.parametrize("width", WIDTHS)
def test_a_reader_finds_a_rounds_results_and_filters_them_in_chinese(live_server, chinese, width):
    d = chinese
    d.set_window_size(*WIDTHS[width])
    open_page(d, live_server.url + "/")
    wrong = check(d, "home", width)
    d.find_element(By.CSS_SELECTOR, "header.site nav a[href='/rounds/']").click()
    wait(d, lambda d: urlparse(d.current_url).path == "/rounds/")
    assert d.find_element(By.TAG_NAME, "h1").text == "轮次"
    wrong += check(d, "rounds", width)
    d.find_element(By.CSS_SELECTOR, "a[href='/r/training-v5.1/']").click()
    wait(d, lambda d: urlparse(d.current_url).path == "/r/training-v5.1/")
    settled(d)
    assert "封闭式组别" in d.find_element(By.ID, "results").text
    d.find_element(By.CSS_SELECTOR, "#filters-fold summary").click()
    Select(d.find_element(By.ID, "id_benchmark")).select_by_value("rgat")
    d.find_element(By.CSS_SELECTOR, "#table-filters p.actions button[type=submit]").click()
    wait(d, lambda d: "benchmark=rgat" in d.current_url)
    settled(d)
    chips = d.find_element(By.CSS_SELECTOR, "[data-chips]").text
    assert "筛选条件" in chips and "基准测试" in chips
    wrong += check(d, "round", width)
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("width", WIDTHS)
def test_a_reader_reads_a_result_its_runs_and_findings_in_chinese(live_server, chinese, width):
    d = chinese
    d.set_window_size(*WIDTHS[width])
    open_page(d, live_server.url + SYSTEM)
    wrong = check(d, "system", width)
    open_page(d, live_server.url + RESULT)
    main = d.find_element(By.TAG_NAME, "main").text
    assert "计入的运行" in main and "检查发现" in main and "收敛" in main
    d.find_element(By.CSS_SELECTOR, "details.findings summary").click()
    wrong += check(d, "result", width)
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("width", WIDTHS)
def test_a_reader_compares_two_systems_in_chinese(live_server, chinese, width):
    d = chinese
    d.set_window_size(*WIDTHS[width])
    open_page(
        d,
        live_server.url + "/r/training-v5.1/compare/"
        "?s=Dell/1xXE9680Lx8H200-SXM-141GB&s=Dell/1xXE9680Lx8B200-SXM-180GB",
    )
    assert d.find_element(By.TAG_NAME, "h1").text == "比较系统"
    wrong = check(d, "compare", width)
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("width", WIDTHS)
def test_a_reader_follows_progress_across_rounds_in_chinese(live_server, chinese, width):
    d = chinese
    d.set_window_size(*WIDTHS[width])
    open_page(d, live_server.url + "/progress/")
    assert d.find_element(By.TAG_NAME, "h1").text == "训练速度提升了多少？"
    wrong = check(d, "progress", width)
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("width", WIDTHS)
def test_a_reader_reads_a_runs_log_in_chinese(live_server, chinese, width):
    d = chinese
    d.set_window_size(*WIDTHS[width])
    open_page(d, live_server.url + RESULT + "log/7/?line=5141#L5141")
    assert d.find_element(By.TAG_NAME, "h1").text == "运行 7 的日志"
    wrong = check(d, "log", width)
    assert not wrong, "\n".join(wrong)


@pytest.fixture
def v51_open(live_server, django_db_blocker):
    """v5.1 open for submission while the test runs, its calendar put back after."""
    from leaderboard.models import Round

    from ..live_round import set_phase

    fields = ("opens_at", "deadline_at", "review_ends_at", "publish_at")
    with django_db_blocker.unblock():
        round_ = Round.objects.get(key="training-v5.1")
        saved = {f: getattr(round_, f) for f in fields}
        set_phase(round_, "open")
    yield
    with django_db_blocker.unblock():
        Round.objects.filter(pk=round_.pk).update(**saved)


@pytest.mark.parametrize("width", WIDTHS)
def test_a_submitter_uploads_and_reads_the_findings_in_chinese(
    live_server, chinese, tmp_path, v51_open, cast, width
):
    root = write_bundle(
        tmp_path,
        "Acme",
        # A run that stops short of the target: a finding to read.
        [SystemSpec("alpha", results={"retinanet": [10.0, 11.0, 12.0, 13.0, 14.0]})],
        {"retinanet": 0.34},
    )
    bundle = tmp_path / f"acme-zh-{width}.tgz"
    with tarfile.open(bundle, "w:gz") as tar:
        tar.add(root, arcname="Acme")

    d = chinese
    d.set_window_size(*WIDTHS[width])
    open_page(d, f"{live_server.url}/submissions/upload/")
    assert "/accounts/login/" in d.current_url
    wrong = check(d, "login", width)
    d.find_element(By.ID, "id_username").send_keys("member_a")
    d.find_element(By.ID, "id_password").send_keys("pw")
    d.find_element(By.CSS_SELECTOR, "main button[type=submit]").click()
    wait(d, lambda d: urlparse(d.current_url).path == "/submissions/upload/")
    assert d.find_element(By.TAG_NAME, "h1").text == "上传提交包"
    wrong += check(d, "upload", width)
    Select(d.find_element(By.ID, "id_round")).select_by_value("training-v5.1")
    d.find_element(By.ID, "id_bundle").send_keys(str(bundle))
    d.find_element(By.CSS_SELECTOR, "main button[type=submit]").click()
    wait(d, lambda d: "/submissions/" in d.current_url and "upload" not in d.current_url)
    wait(d, lambda d: d.find_element(By.CSS_SELECTOR, "[data-field=status_label]").text == "有效")
    main = d.find_element(By.TAG_NAME, "main").text
    assert "已检查 5 / 5 次运行" in main and "检查发现" in main and "结论为" in main
    wrong += check(d, "submission", width)
    d.find_element(By.CSS_SELECTOR, "form.account button").click()  # log out: the next test logs in
    assert not wrong, "\n".join(wrong)
