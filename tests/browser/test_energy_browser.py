"""MLPerf Power in a real browser, on v4.0's smc-ac-power folder (only that submitter: ingested from the shared
round when these tests first need it): the energy column with "power results only", the time/energy chart,
a run's power plot, and axe-core finding nothing serious or critical on those pages."""

import os
import subprocess
import time

import pytest
from django.core.management import call_command
from selenium.webdriver.common.by import By

from ..conftest import SHARED, shared_plain_tar
from .pages import axe_violations, charts_drawn, open_page

pytestmark = [pytest.mark.shared_rounds, pytest.mark.browser]
TARBALL = SHARED / "training_v4.0_results.tar.xz"
ROUND = "/r/training-v4.0/"


@pytest.fixture(scope="module")
def smc_power(shared_catalogue, django_db_blocker, tmp_path_factory):
    """smc-ac-power, ingested by a real worker (in this process where PostgreSQL and Redis do not answer)."""
    if not TARBALL.is_file():
        pytest.skip(f"{TARBALL} is not here (set MLPERF_SHARED_DIR)")
    from django.test.utils import override_settings

    from portal.celery import app

    from ..worker import Worker, purge_broker, services_missing

    out = tmp_path_factory.mktemp("v40")
    subprocess.run(
        ["tar", "-xf", str(shared_plain_tar(TARBALL.name)), "-C", str(out), "./smc-ac-power"],
        check=True,
    )
    eager = app.conf.task_always_eager
    with django_db_blocker.unblock(), override_settings(MEDIA_ROOT=shared_catalogue):
        worker = None
        if services_missing() is None:
            purge_broker()
            worker = Worker(shared_catalogue, concurrency=2, name="power")
            app.conf.task_always_eager = False
        started = time.monotonic()
        try:
            call_command(
                "ingest",
                str(out / "smc-ac-power"),
                "--round",
                "training-v4.0",
                "--publish",
                "--wait",
                "--timeout",
                "600",
                stdout=open(os.devnull, "w"),
            )
        finally:
            app.conf.task_always_eager = eager
            if worker is not None:
                worker.stop()
        print(f"\nbrowser tests: ingested smc-ac-power in {time.monotonic() - started:.0f} s")


def test_energy_column_chart_and_power_plot_render_without_serious_violations(
    smc_power, live_server, browser
):
    d = browser
    d.set_window_size(1400, 900)
    open_page(d, live_server.url + ROUND + "?power_only=1&show=energy&chart=llama2_70b_lora")
    cells = d.find_elements(By.CSS_SELECTOR, "table.leaderboard td.num a")
    assert cells and all(c.text.replace(",", "").isdigit() for c in cells if c.text), [
        c.text for c in cells
    ]
    assert "energy to train in kJ" in d.find_element(
        By.CSS_SELECTOR, "table.leaderboard caption"
    ).get_attribute("textContent")
    drawn = charts_drawn(d)
    assert drawn.get("chart-energy") == 3, drawn  # LoRA on 1, 8 and 64 nodes
    assert d.find_elements(By.CSS_SELECTOR, "#chart-energy .scatterlayer .point")
    assert axe_violations(d) == []

    link = d.find_element(
        By.CSS_SELECTOR, "table.leaderboard a[href*='/8xSMC-H100-SXM-80GB/resnet/']"
    )
    open_page(d, link.get_attribute("href"))
    assert d.find_elements(By.CSS_SELECTOR, "dl.facts"), (
        d.title,
        d.current_url,
        d.page_source[:600],
    )
    assert "per accelerator" in d.find_element(By.CSS_SELECTOR, "dl.facts").text
    drawn = charts_drawn(d)
    assert drawn.get("chart-power", 0) > 100, drawn  # 8 nodes' readings
    traces = d.execute_script("return document.getElementById('chart-power').data.length")
    assert traces == 8
    marks = d.find_elements(By.CSS_SELECTOR, "#chart-power .annotation-text")
    assert {m.text for m in marks} == {"run_start", "run_stop"}
    assert axe_violations(d) == []
