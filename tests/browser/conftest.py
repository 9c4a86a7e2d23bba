"""Browser tests: headless Debian Chromium driven by Selenium against pytest-django's live server.

The three shared MLPerf rounds are ingested once for this package (eager Celery, published)
and flushed when the package is done; the live server and the browser see that data. Every
test skips with the reason when Chromium, its driver or Selenium is missing. Screenshots go to
artifacts/screenshots/ (a CI artifact, kept out of git).
"""

import os
import shutil
import tempfile
import time
from pathlib import Path

import pytest
from django.core.management import call_command

from ..conftest import FAST_HASHERS, SHARED, make_cast

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")
SCREENSHOTS = Path(__file__).resolve().parents[2] / "artifacts" / "screenshots"
ROUNDS = {
    "training-v0.5": "training_v0.5_results.tar.xz",
    "training-v0.6": "training_v0.6_results.tar.xz",
    "training-v5.1": "training_v5.1_results.tar.xz",
}


def _missing() -> str | None:
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install -r requirements-dev.txt)"
    for path, package in ((CHROMIUM, "chromium"), (CHROMEDRIVER, "chromium-driver")):
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            return f"{path} is missing: apt-get install -y chromium chromium-driver (Debian's {package})"
    return None


@pytest.fixture(scope="package")
def browser():
    reason = _missing()
    if reason:
        print(f"\nbrowser tests skipped: {reason}")
        pytest.skip(reason)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--disable-gpu",
        "--window-size=1400,1000",
        "--force-device-scale-factor=1",
        "--lang=en-GB",
    ):
        options.add_argument(arg)
    # A folder of this run's own: two runs on one machine emptied each other's shared one mid-download.
    given = os.environ.get("BROWSER_DOWNLOADS")
    downloads = Path(given or tempfile.mkdtemp(prefix="portal-browser-downloads-"))
    shutil.rmtree(downloads, ignore_errors=True)
    downloads.mkdir(parents=True)
    options.add_experimental_option(
        "prefs",
        {
            "download.default_directory": str(downloads),
            "download.prompt_for_download": False,
        },
    )
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})  # for no_policy_violations
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(60)
    driver.downloads = downloads
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    yield driver
    driver.quit()
    if not given:
        shutil.rmtree(downloads, ignore_errors=True)


@pytest.fixture(autouse=True)
def no_policy_violations(request):
    """What a browser test's pages do keeps to the site's Content-Security-Policy: Chromium's console
    holds no refusal ("Refused to execute inline script because it violates the following Content
    Security Policy directive ...") when the test ends, from this site or another (Redoc's logo from its
    makers' site was refused until portal/redoc.py)."""
    if "browser" not in request.fixturenames:
        yield
        return
    browser = request.getfixturevalue("browser")
    browser.get_log("browser")  # what earlier tests left
    yield
    refused = [
        entry["message"]
        for entry in browser.get_log("browser")
        if "Content Security Policy" in entry["message"]
    ]
    assert not refused, "refused by the Content-Security-Policy:\n" + "\n".join(refused)


@pytest.fixture(scope="package")
def shared_catalogue(django_db_setup, django_db_blocker, tmp_path_factory, browser):
    """The three shared rounds, ingested and published once for the browser tests."""
    missing = [name for name in ROUNDS.values() if not (SHARED / name).is_file()]
    if missing:
        pytest.skip(
            f"the shared MLPerf rounds are not in {SHARED}: {', '.join(missing)} (set MLPERF_SHARED_DIR)"
        )
    from django.test.utils import override_settings

    from leaderboard.catalogue import prices
    from leaderboard.catalogue.rounds import load_all
    from portal.celery import app

    media = tmp_path_factory.mktemp("browser-media")
    eager = app.conf.task_always_eager
    with django_db_blocker.unblock(), override_settings(MEDIA_ROOT=media):
        try:
            started = time.monotonic()
            load_all()
            prices.load_all()
            _ingest_rounds(media)
            print(
                f"\nbrowser tests: ingested the three shared rounds in {time.monotonic() - started:.0f} s"
            )
            app.conf.task_always_eager = True  # what the tests upload is checked in this process
            yield media  # where the bundles are kept: the log viewer reads them there
        finally:
            app.conf.task_always_eager = eager
            call_command("flush", interactive=False, verbosity=0)


@pytest.fixture(scope="package")
def cast(shared_catalogue, django_db_blocker):
    """The one cast (tests/conftest.py's make_cast: member_a of Acme, staff, outsider, ...), made once
    in the package's shared database beside the catalogue: the browser tests have no database of their
    own to make it in per test (the live server reads the package's), and the catalogue's flush at the
    package's end takes the cast with it. Their passwords are hashed as every test's are (fast_passwords,
    set per test, after this fixture of the package): a test's login accepts only that hasher's."""
    from django.test.utils import override_settings

    with django_db_blocker.unblock(), override_settings(PASSWORD_HASHERS=FAST_HASHERS):
        return make_cast()


def _ingest_rounds(media: Path, timeout: float = 600) -> None:
    """The three rounds, published: checked by a real worker of two processes where PostgreSQL and Redis
    answer (both cores check runs while this process splits the next archive), else in this process."""
    from portal.celery import app
    from submissions.models import Submission

    from ..worker import Worker, purge_broker, services_missing

    worker = None
    if services_missing() is None:
        purge_broker()
        worker = Worker(media, concurrency=2, name="catalogue")
    else:
        app.conf.task_always_eager = True
    try:
        for key, name in ROUNDS.items():
            call_command(
                "ingest",
                str(SHARED / name),
                "--round",
                key,
                "--publish",
                stdout=open(os.devnull, "w"),
            )
        deadline = time.monotonic() + timeout
        while Submission.objects.exclude(status__in=Submission.FINAL).exists():
            assert time.monotonic() < deadline, f"the shared rounds were not checked in {timeout} s"
            time.sleep(0.1)
    finally:
        if worker is not None:
            worker.stop()


@pytest.fixture(autouse=True)
def _live_server_helper(request):
    """pytest-django's helper, without a per-test transactional_db: the catalogue is shared by the package."""
    if "live_server" not in request.fixturenames:
        yield
        return
    request.getfixturevalue("shared_catalogue")
    live_server = request.getfixturevalue("live_server")
    live_server._live_server_modified_settings.enable()
    yield
    live_server._live_server_modified_settings.disable()


def screenshot(driver, name: str, full_page: bool = True) -> Path:
    """Save a PNG of the page (the whole page height unless full_page is False)."""
    path = SCREENSHOTS / f"{name}.png"
    if full_page:
        width = driver.execute_script("return window.innerWidth")
        height = driver.execute_script(
            "return Math.min(document.documentElement.scrollHeight, 6000)"
        )
        original = driver.get_window_size()
        driver.set_window_size(max(width, 360), height + 140)
        time.sleep(0.3)
        driver.save_screenshot(str(path))
        driver.set_window_size(original["width"], original["height"])
    else:
        driver.save_screenshot(str(path))
    return path
