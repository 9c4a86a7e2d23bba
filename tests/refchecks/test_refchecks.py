"""Reference checks on the portal's side: planned at finalize, waiting for a family's agent, stored from an
agent's answer with a verdict, retried by the sweeper and failed with the reason; the pages and the API."""

import tarfile
import uuid
from datetime import timedelta

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from leaderboard.models import Result
from submissions.checking.pipeline import sweep
from submissions.models import Agent, ReferenceCheck, Submission
from submissions.refchecks import jobs
from submissions.synthetic.bundles import SystemSpec, write_bundle

from .. import leaderboard_factories as make

State, Verdict = ReferenceCheck.State, ReferenceCheck.Verdict
H100_AGENT = {
    "hostname": "gpu-host-1",
    "queues": ["gpu", "gpu.h100"],
    "accelerator": "NVIDIA H100 80GB HBM3",
    "accelerator_count": 8,
    "memory_bytes": 85_000_000_000,
    "driver": "570.86",
    "cuda": "12.8",
    "torch": "2.13.0",
    "current_job": "",
    "jobs_done": 0,
    "jobs_failed": 0,
}


def measurement(samples_per_second, **extra):
    return {
        "samples_per_second_per_accelerator": samples_per_second,
        "model": "llama31_8b (2 of 32 layers)",
        "shapes": {"batch": 2, "seq_len": 8192},
        "steps": 10,
        "dtype": "bf16",
        "device": "cuda:0 NVIDIA H100 80GB HBM3",
        "versions": {"torch": "2.13.0"},
        "cpu": False,
        **extra,
    }


@pytest.fixture
def v51(rounds):
    return rounds["training-v5.1"]


IMPLIED = 159_744 / (600.0 * 8)  # the median run's samples/s per accelerator: 33.28


@pytest.mark.django_db
def test_a_check_is_queued_for_the_family_agents_with_the_batch_per_accelerator(v51):
    check = jobs.plan(make.llama31_result(v51), reason="finalize")
    assert (check.state, check.queue, check.family) == (State.QUEUED, "gpu.h100", "NVIDIA H100")
    assert check.implied == pytest.approx(IMPLIED) and check.tolerance == 3.0
    assert check.request == {
        "check": str(check.uid),
        "benchmark": "llama31_8b",
        "batch_size": 2,  # 16 ÷ 8
        "seq_len": 8192,
        "precision": "bf16",
        "max_seconds": 120.0,
        "reply_queue": "checks",
    }
    assert [r["per_accelerator"] for r in check.implied_runs] == pytest.approx(
        [159_744 / (s * 8) for s in (540, 600, 660)]
    )
    assert jobs.state_label(check, set()) == "waiting for an agent with NVIDIA H100"
    assert jobs.state_label(check, {"gpu", "gpu.h100"}) == "queued"


@pytest.mark.parametrize(
    "accelerator, benchmark, says",
    [
        ("tpuv3-8", "llama31_8b", "TPU"),
        ("NVIDIA H100-SXM5-80GB", "rgat", "no probe for this benchmark (rgat)"),
    ],
)
@pytest.mark.django_db
def test_what_no_agent_can_measure_is_recorded_at_once_as_could_not_run(
    v51, accelerator, benchmark, says
):
    system = make.system(v51, "Acme", accelerator_model=accelerator)
    check = jobs.plan(make.result(system, benchmark, 10, runs=5), reason="finalize")
    assert (check.state, check.verdict, check.queue) == (State.DONE, Verdict.COULD_NOT_RUN, "")
    assert says in check.message


@pytest.mark.django_db
def test_a_result_whose_logs_imply_nothing_is_not_sent(v51):
    system = make.system(v51, "Acme")
    check = jobs.plan(make.result(system, "llama31_8b", 10, runs=0), reason="finalize")
    assert check.verdict == Verdict.COULD_NOT_RUN and "no run converged" in check.message


@pytest.mark.django_db
def test_a_heartbeat_registers_the_agent_and_marks_its_job_running(v51):
    check = jobs.plan(make.llama31_result(v51), reason="finalize")
    agent = jobs.heartbeat({**H100_AGENT, "current_job": str(check.uid), "jobs_done": 4})
    assert (agent.family, agent.accelerator_count, agent.jobs_done) == ("NVIDIA H100", 8, 4)
    check.refresh_from_db()
    assert (check.state, check.agent, check.started_at is not None) == (State.RUNNING, agent, True)
    assert jobs.state_label(check, jobs.online_queues()) == "running on gpu-host-1"


@pytest.mark.parametrize(
    "measured, verdict, ratio",
    [(20.0, Verdict.CONSISTENT, IMPLIED / 20.0), (10.0, Verdict.IMPLAUSIBLY_FAST, IMPLIED / 10.0)],
)
@pytest.mark.django_db
def test_a_measurement_on_the_claimed_family_is_judged(v51, measured, verdict, ratio):
    check = jobs.plan(make.llama31_result(v51), reason="finalize")
    jobs.heartbeat(H100_AGENT)
    payload = {"check": str(check.uid), "agent": "gpu-host-1", "measurement": measurement(measured)}
    assert jobs.store(payload) == "stored"
    check.refresh_from_db()
    assert (check.state, check.verdict) == (State.DONE, verdict)
    assert check.measured == measured and check.ratio == pytest.approx(ratio)
    assert check.measurement["model"] == "llama31_8b (2 of 32 layers)"
    assert jobs.store(payload) == "ignored"  # a repeat changes nothing


@pytest.mark.django_db
def test_a_measurement_on_other_hardware_or_a_cpu_is_labelled_not_judged(v51):
    first = jobs.send_to_any_agent(make.llama31_result(v51), None)
    assert (first.queue, first.any_agent) == ("gpu", True)
    jobs.heartbeat({**H100_AGENT, "hostname": "old", "accelerator": "Tesla V100-SXM2-16GB"})
    jobs.store({"check": str(first.uid), "agent": "old", "measurement": measurement(1.0)})
    first.refresh_from_db()
    assert first.verdict == Verdict.OTHER_HARDWARE and "NVIDIA V100" in first.message

    second = jobs.send_to_any_agent(first.result, None)
    cpu = measurement(0.2, cpu=True, device="cpu")
    jobs.store({"check": str(second.uid), "agent": "ci", "measurement": cpu})
    second.refresh_from_db()
    assert (second.verdict, second.ratio) == (Verdict.CPU, None)
    assert "never compared" in second.message


@pytest.mark.django_db
def test_an_agent_error_is_recorded_as_could_not_run_with_the_reason(v51):
    check = jobs.plan(make.llama31_result(v51), reason="finalize")
    assert (
        jobs.store({"check": str(check.uid), "agent": "h", "error": "CUDA out of memory"})
        == "error"
    )
    check.refresh_from_db()
    assert check.verdict == Verdict.COULD_NOT_RUN
    assert check.message == "The agent could not run it: CUDA out of memory"


@pytest.mark.parametrize(
    "payload",
    [
        None,
        [],
        {"check": "not a uuid"},
        {"check": str(uuid.uuid4()), "measurement": {}},
        {"check": {"nested": 1}, "agent": ["x"]},
    ],
)
def test_a_malformed_or_unknown_answer_is_ignored(db, payload):
    assert jobs.store(payload) == "ignored"


@pytest.mark.parametrize(
    "payload",
    [None, {}, {"hostname": ""}, {"hostname": "h", "queues": "gpu", "memory_bytes": 1e300}],
)
def test_a_malformed_heartbeat_stores_nothing_wrong(db, payload):
    agent = jobs.heartbeat(payload)
    assert agent is None or (agent.queues == [] and agent.memory_bytes is None)


def _age(check, seconds, agent_seconds=None):
    then = timezone.now() - timedelta(seconds=seconds)
    ReferenceCheck.objects.filter(pk=check.pk).update(started_at=then, sent_at=then)
    if agent_seconds is not None:
        Agent.objects.update(last_seen=timezone.now() - timedelta(seconds=agent_seconds))


@pytest.mark.django_db
def test_the_sweeper_retries_a_job_whose_agent_vanished_then_records_the_failure(v51, settings):
    settings.REFCHECK_MAX_ATTEMPTS = 2
    check = jobs.plan(make.llama31_result(v51), reason="finalize")
    jobs.heartbeat({**H100_AGENT, "current_job": str(check.uid)})
    assert jobs.sweep() == []  # a live agent's job is left alone
    _age(check, 10, agent_seconds=settings.AGENT_OFFLINE_AFTER_S + 1)
    assert [a for _, a in sweep(timedelta(hours=1), 3, None)] == [
        f"retry reference check {check.uid}"
    ]
    check.refresh_from_db()
    assert (check.state, check.attempts, check.agent) == (State.QUEUED, 2, None)
    assert "gpu-host-1 vanished" in check.message
    jobs.heartbeat({**H100_AGENT, "hostname": "gpu-host-2", "current_job": str(check.uid)})
    _age(check, 10, agent_seconds=settings.AGENT_OFFLINE_AFTER_S + 1)
    assert [a for _, a in jobs.sweep()] == [f"failed reference check {check.uid}"]
    check.refresh_from_db()
    assert (check.state, check.verdict) == (State.FAILED, Verdict.COULD_NOT_RUN)
    assert check.message == (
        "Failed after 2 attempts: its agent gpu-host-2 vanished (no heartbeat)."
    )


@pytest.mark.django_db
def test_the_sweeper_retries_a_job_past_its_limit_on_a_live_agent(v51, settings):
    check = jobs.plan(make.llama31_result(v51), reason="finalize")
    jobs.heartbeat({**H100_AGENT, "current_job": str(check.uid)})
    _age(check, settings.REFCHECK_JOB_LIMIT_S + 1)
    assert [a for _, a in jobs.sweep()] == [f"retry reference check {check.uid}"]
    check.refresh_from_db()
    assert check.state == State.QUEUED and "past its limit" in check.message


@pytest.mark.django_db
def test_a_job_for_a_family_without_agents_waits_and_is_never_retried(v51, settings):
    check = jobs.plan(make.llama31_result(v51), reason="finalize")
    jobs.heartbeat({**H100_AGENT, "queues": ["gpu", "gpu.b200"], "accelerator": "NVIDIA B200"})
    _age(check, settings.REFCHECK_JOB_LIMIT_S * 10)
    assert jobs.sweep() == []
    check.refresh_from_db()
    assert check.state == State.QUEUED and check.attempts == 1


@pytest.mark.django_db
def test_a_queued_job_an_idle_agent_of_its_queue_never_took_is_sent_again(v51, settings):
    check = jobs.plan(make.llama31_result(v51), reason="finalize")
    jobs.heartbeat(H100_AGENT)
    _age(check, settings.REFCHECK_JOB_LIMIT_S + 1)
    assert [a for _, a in jobs.sweep()] == [f"retry reference check {check.uid}"]


@pytest.mark.django_db
def test_the_result_page_says_what_the_check_waits_for_and_then_its_verdict(client, v51):
    result = make.llama31_result(v51)
    check = jobs.plan(result, reason="finalize")
    url = f"/r/training-v5.1/Acme/{result.system.key}/llama31_8b/"
    html = client.get(url).content.decode()
    assert "waiting for an agent with NVIDIA H100" in html
    jobs.heartbeat(H100_AGENT)
    jobs.store({"check": str(check.uid), "agent": "gpu-host-1", "measurement": measurement(10.0)})
    html = client.get(url).content.decode()
    assert "Implausibly fast" in html and "tolerance of 3x" in html and "3.33×" in html
    assert (
        "{&quot;batch&quot;: 2, &quot;seq_len&quot;: 8192}" in html
    )  # what the probe ran, as JSON
    assert "gpu-host-1" not in html  # the agents' host names are for staff


@pytest.mark.django_db
def test_the_api_lists_public_checks_and_staff_see_the_agents(client, v51, cast):
    public_check = jobs.plan(make.llama31_result(v51), reason="finalize")
    hidden = jobs.plan(make.llama31_result(v51, published=False), reason="finalize")
    jobs.heartbeat(H100_AGENT)
    body = client.get("/api/v1/reference-checks/").json()
    assert [c["uid"] for c in body["results"]] == [str(public_check.uid)]
    assert body["results"][0]["state_label"] == "queued"
    assert body["results"][0]["result"]["benchmark"] == "llama31_8b"
    assert client.get(f"/api/v1/reference-checks/{hidden.uid}/").status_code == 404
    assert client.get("/api/v1/agents/").status_code in (401, 403)
    client.force_login(cast["staff"])
    assert client.get(f"/api/v1/reference-checks/{hidden.uid}/").status_code == 200
    agents = client.get("/api/v1/agents/").json()["results"]
    assert [(a["hostname"], a["online"], a["family"]) for a in agents] == [
        ("gpu-host-1", True, "NVIDIA H100")
    ]
    assert client.get("/api/v1/reference-checks/?verdict=nonsense").status_code == 400
    by_result = client.get(f"/api/v1/reference-checks/?result={public_check.result.uid}").json()
    assert [c["result"]["uid"] for c in by_result["results"]] == [str(public_check.result.uid)]
    assert client.get("/api/v1/reference-checks/?result=not-a-uuid").status_code == 400


@pytest.mark.django_db
def test_staff_ask_the_api_for_a_check_of_any_result(client, v51, cast):
    result = make.llama31_result(v51)
    asked = {"result": str(result.uid), "any_agent": True}
    assert client.post("/api/v1/reference-checks/", asked).status_code in (401, 403)
    client.force_login(cast["member_a"])
    assert client.post("/api/v1/reference-checks/", asked).status_code == 403
    client.force_login(cast["staff"])
    body = client.post("/api/v1/reference-checks/", asked, content_type="application/json").json()
    assert (body["queue"], body["any_agent"], body["state"]) == ("gpu", True, "queued")
    for bad in ({"result": str(uuid.uuid4())}, {"result": "x"}, {}):
        assert client.post("/api/v1/reference-checks/", bad).status_code == 400
    assert ReferenceCheck.objects.count() == 1


@pytest.mark.django_db
def test_each_step_of_a_check_is_in_the_audit_log(v51, settings):
    from audit.models import AuditEvent

    settings.REFCHECK_MAX_ATTEMPTS = 1
    check = jobs.plan(make.llama31_result(v51), reason="finalize")
    jobs.heartbeat({**H100_AGENT, "current_job": str(check.uid)})
    _age(check, 10, agent_seconds=settings.AGENT_OFFLINE_AFTER_S + 1)
    jobs.sweep()
    events = AuditEvent.objects.filter(object_uid=str(check.uid)).order_by("pk")
    assert [e.action for e in events] == ["reference_check.queued", "reference_check.failed"]
    assert events[0].round_key == "training-v5.1" and "vanished" in events[1].details["why"]
    assert events[0].details["result"] == str(check.result.uid)
    appeared = AuditEvent.objects.get(action="agent.appeared")
    assert appeared.details["accelerator"] == "NVIDIA H100 80GB HBM3"


@pytest.mark.django_db
def test_the_agents_page_is_for_staff(client, cast, v51):
    jobs.heartbeat(H100_AGENT)
    Agent.objects.create(hostname="gone", last_seen=timezone.now() - timedelta(days=1))
    client.force_login(cast["member_a"])
    assert client.get("/agents/").status_code == 302  # to the admin's login
    client.force_login(cast["staff"])
    html = client.get("/agents/").content.decode()
    assert "1 of 2 agents online" in html and "gpu-host-1" in html and "offline" in html


@pytest.mark.django_db
def test_staff_send_a_check_to_any_agent_from_the_submission_page(client, cast, v51):
    result = make.llama31_result(v51)
    submission = result.system.submission
    client.force_login(cast["staff"])
    url = f"/submissions/{submission.uid}/reference-checks/"
    form = {"result": str(result.uid), "to": "any"}
    assert client.post(url, form).status_code == 302
    check = ReferenceCheck.objects.get(result=result)
    assert (check.queue, check.any_agent, check.requested_by) == ("gpu", True, cast["staff"])
    html = client.get(f"/submissions/{submission.uid}/").content.decode()
    assert "waiting for any agent" in html
    for bad in ({"result": "nope"}, {"result": str(uuid.uuid4())}, {}):
        assert client.post(url, bad).status_code == 302
    client.force_login(cast["member_a"])
    assert client.post(url, form).status_code == 302 and ReferenceCheck.objects.count() == 1


@pytest.mark.usefixtures("eager")
@pytest.mark.django_db(transaction=True)  # eager tasks run in on_commit hooks
def test_finalize_queues_checks_for_closed_results_of_a_live_round_only(rounds, tmp_path):
    systems = [
        SystemSpec(
            "alpha",
            results={"llama31_8b": [90.0, 95.0, 100.0, 97.0, 93.0, 91.0, 92.0, 94.0, 96.0, 98.0]},
        ),
        SystemSpec("beta", division="open", results={"rgat": [20.0, 21.0, 22.0, 23.0, 24.0]}),
    ]
    root = write_bundle(tmp_path / "src", "Acme", systems, {})
    archive = tmp_path / "acme.tgz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(root, arcname="Acme")
    call_command("ingest", str(archive), "--round", "training-v5.1")
    submission = Submission.objects.get()
    assert submission.is_final, submission.message
    check = ReferenceCheck.objects.get()  # none for the open-division result
    assert check.result == Result.objects.get(system__key="alpha")
    assert (check.state, check.queue, check.request["batch_size"]) == (State.QUEUED, "gpu.h100", 2)
    assert check.implied > 0 and len(check.implied_runs) == 8  # the olympic mean's counted runs
    jobs.store({"check": str(check.uid), "agent": "a", "error": "CUDA out of memory"})
    assert jobs.plan_for_submission(submission.pk) == []  # a re-validation: no second GPU run


@pytest.mark.django_db
def test_the_command_queues_a_round_s_checks_and_counts_them(v51):
    from io import StringIO

    make.llama31_result(v51)
    system = make.system(v51, "Acme", division="open")
    make.result(system, "retinanet", 10, runs=5)
    out = StringIO()
    call_command("reference_checks", "--round", "training-v5.1", "--queue", stdout=out)
    assert "queued 1 checks: 1 gpu.h100" in out.getvalue()  # not the open division's
    assert "1  waiting for an agent with NVIDIA H100" in out.getvalue()
    out = StringIO()
    call_command("reference_checks", "--round", "training-v5.1", "--queue", stdout=out)
    assert "queued 0 checks: none" in out.getvalue()  # each result has one now
    with pytest.raises(CommandError):
        call_command("reference_checks", "--round", "no-such-round")
