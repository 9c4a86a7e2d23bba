"""Reference checks in the browser: a v5.1 result's check waiting for its family's agent, then its verdict
on the result page; the agents page for staff."""

import pytest
from selenium.webdriver.common.by import By

from .conftest import screenshot
from .pages import open_page, wait

pytestmark = [pytest.mark.shared_rounds, pytest.mark.browser]

AGENT = {
    "hostname": "agent@gpu-host-1",
    "queues": ["gpu", "gpu.h200"],
    "accelerator": "NVIDIA H200",
    "accelerator_count": 8,
    "memory_bytes": 150_000_000_000,
    "driver": "570.86",
    "cuda": "12.8",
    "torch": "2.13.0",
    "current_job": None,
    "jobs_done": 3,
    "jobs_failed": 1,
}


def _log_in(d, url, user):
    """Logs a member of the cast in (every password of the cast is "pw")."""
    open_page(d, f"{url}/accounts/login/")
    d.find_element(By.ID, "id_username").send_keys(user.username)
    d.find_element(By.ID, "id_password").send_keys("pw")
    d.find_element(By.CSS_SELECTOR, "main button[type=submit]").click()
    wait(d, lambda d: "/accounts/login/" not in d.current_url)


@pytest.fixture
def planned_as_live(django_db_blocker):
    """plan(submission_id): the checks finalize plans for a submission of a live round. The shared
    catalogue's v5.1 is imported history, for which finalize plans none (ccd62a4): its round is taken live
    while they are planned, as the tests' live round is, and the checks are deleted after the test."""
    from leaderboard.models import Round
    from submissions.models import ReferenceCheck, Submission
    from submissions.refchecks import jobs

    planned = []

    def plan(submission_id: int) -> None:
        round_ = Round.objects.filter(pk=Submission.objects.get(pk=submission_id).round_id)
        round_.update(history=False)
        try:
            planned.extend(jobs.plan_for_submission(submission_id))
        finally:
            round_.update(history=True)

    yield plan
    with django_db_blocker.unblock():
        ReferenceCheck.objects.filter(pk__in=[c.pk for c in planned]).delete()


def test_a_result_page_shows_its_check_waiting_then_its_verdict(
    live_server, browser, django_db_blocker, planned_as_live
):
    from leaderboard.models import Result
    from submissions.models import Agent, ReferenceCheck
    from submissions.refchecks import jobs

    with django_db_blocker.unblock():
        result = (
            Result.objects.filter(
                system__round__key="training-v5.1",
                benchmark__key="llama31_8b",
                system__accelerator_model__contains="H200",
                published=True,
                system__division="closed",
            )
            .select_related("system__submitter")
            .order_by("pk")
            .first()
        )
        assert result is not None
        # Finalize plans it when a live round's closed result is recorded.
        planned_as_live(result.system.submission_id)
        check = ReferenceCheck.objects.filter(result=result).first()
        assert check is not None and check.queue == "gpu.h200"
        Agent.objects.all().delete()
    url = f"{live_server.url}{result.get_absolute_url()}"
    d = browser
    open_page(d, url)
    state = d.find_element(By.CSS_SELECTOR, f'#reference-checks [data-check="{check.uid}"]')
    assert "waiting for an agent with NVIDIA H200" in state.text

    with django_db_blocker.unblock():
        jobs.heartbeat(AGENT)
        # A measurement that makes the logs' figure implausible: a tenth of it.
        measured = check.implied / 10
        jobs.store(
            {
                "check": str(check.uid),
                "agent": AGENT["hostname"],
                "measurement": {
                    "samples_per_second_per_accelerator": measured,
                    "model": "Llama 3.1 8B (32 of 32 layers)",
                    "shapes": {"batch": check.request["batch_size"], "seq_len": 8192},
                    "steps": 10,
                    "dtype": "bf16",
                    "device": "NVIDIA H200",
                    "versions": {"torch": "2.13.0", "cuda": "12.8"},
                    "cpu": False,
                },
            }
        )
    open_page(d, url)
    row = d.find_element(By.CSS_SELECTOR, f'#reference-checks [data-check="{check.uid}"]')
    verdict = row.find_element(By.CSS_SELECTOR, '[data-field="verdict"]').text
    assert "Implausibly fast" in verdict and "tolerance of 3x" in verdict
    row.find_element(By.TAG_NAME, "summary").click()  # what the probe ran, folded
    wait(d, lambda d: row.find_element(By.CSS_SELECTOR, "details dl").is_displayed())
    assert "Llama 3.1 8B" in row.text and "bf16" in row.text
    screenshot(d, "reference-check-result")


def test_staff_see_the_agents_page_and_others_do_not(
    live_server, browser, django_db_blocker, planned_as_live, cast
):
    from datetime import timedelta

    from django.utils import timezone

    from leaderboard.models import Result
    from submissions.models import Agent
    from submissions.refchecks import jobs

    with django_db_blocker.unblock():
        b200 = (
            Result.objects.filter(
                system__round__key="training-v5.1",
                benchmark__key="llama31_8b",
                system__accelerator_model__contains="B200",
                system__division="closed",
            )
            .order_by("pk")
            .first()
        )
        assert b200 is not None
        planned_as_live(b200.system.submission_id)  # the B200 results' checks wait for an agent
        Agent.objects.all().delete()
        jobs.heartbeat(AGENT)
        Agent.objects.create(
            hostname="agent@old-host",
            queues=["gpu", "gpu.v100"],
            accelerator="Tesla V100-SXM2-16GB",
            family="NVIDIA V100",
            accelerator_count=8,
            jobs_done=12,
            last_seen=timezone.now() - timedelta(hours=3),
        )
    d = browser
    _log_in(d, live_server.url, cast["member_a"])
    open_page(d, f"{live_server.url}/agents/")
    assert "/admin/login/" in d.current_url and not d.find_elements(By.ID, "agents")
    d.delete_all_cookies()

    _log_in(d, live_server.url, cast["staff"])
    d.find_element(By.LINK_TEXT, "Agents").click()
    wait(d, lambda d: d.find_elements(By.ID, "agents"))
    table = d.find_element(By.ID, "agents")
    assert "1 of 2 agents online" in table.find_element(By.TAG_NAME, "caption").text
    by_host = {
        row.get_attribute("data-agent"): row
        for row in table.find_elements(By.CSS_SELECTOR, "tbody tr")
    }
    online = by_host["agent@gpu-host-1"]
    assert online.find_element(By.CSS_SELECTOR, '[data-field="online"]').text == "online"
    assert "NVIDIA H200" in online.find_element(By.CSS_SELECTOR, '[data-field="accelerator"]').text
    assert online.find_element(By.CSS_SELECTOR, '[data-field="done"]').text == "3"
    assert online.find_element(By.CSS_SELECTOR, '[data-field="failed"]').text == "1"
    old = by_host["agent@old-host"]
    assert old.find_element(By.CSS_SELECTOR, '[data-field="online"]').text == "offline"
    assert "idle" in old.find_element(By.CSS_SELECTOR, '[data-field="job"]').text
    # Checks of families with no agent online wait, and the page says for which family.
    waiting = d.find_element(By.ID, "waiting").text
    assert "waiting for an agent with NVIDIA B200" in waiting
    screenshot(d, "agents")
    d.delete_all_cookies()
