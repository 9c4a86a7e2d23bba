"""Findings through the pipeline: stored per run and result, shown to the submitter, downloadable,
reported on the command line, replaced by re-validation with the history kept."""

import json

import pytest
from django.core.management import call_command

from leaderboard.models import Result
from submissions.checking.tasks import revalidate
from submissions.models import Finding, Submission, Validation

from ...bundles import bundle_with_broken_runs
from ...conftest import shared_tarball

# Every test here commits its writes: eager tasks run in on_commit hooks.
pytestmark = [pytest.mark.usefixtures("eager"), pytest.mark.django_db(transaction=True)]


@pytest.fixture
def broken(rounds, cast, tmp_path):
    call_command("ingest", str(bundle_with_broken_runs(tmp_path)), "--round", "training-v5.1")
    submission = Submission.objects.get()
    Submission.objects.filter(pk=submission.pk).update(uploaded_by=cast["member_a"])
    return submission


def test_a_clean_generated_bundle_has_no_findings_that_block(rounds, tmp_path):
    call_command(
        "ingest", str(bundle_with_broken_runs(tmp_path, broken=())), "--round", "training-v5.1"
    )
    submission = Submission.objects.get()
    assert submission.status == "valid", submission.message
    assert not Finding.objects.filter(severity__in=["error", "warning"]).exists()


def test_one_failed_run_is_tolerated_as_a_warning(rounds, tmp_path):
    call_command(
        "ingest", str(bundle_with_broken_runs(tmp_path, broken=(2,))), "--round", "training-v5.1"
    )
    submission = Submission.objects.get()
    assert submission.status == "valid", submission.message
    finding = Finding.objects.get(rule="run.no-run-stop")
    assert finding.severity == "warning" and "infinitely slow" in finding.hint
    result = Result.objects.get()
    # 10, 11, 13, 14 and the failure as infinity: drop 10 and the failure, mean of 11, 13 and 14
    assert result.score_s == pytest.approx((11 + 13 + 14) / 3 * 60, abs=0.01)


def test_a_run_without_run_stop_is_an_error_finding_on_that_file(broken):
    finding = Finding.objects.get(rule="run.no-run-stop", file__endswith="result_2.txt")
    assert finding.file == "Acme/results/alpha/retinanet/result_2.txt"
    assert finding.severity == "error" and finding.line
    assert finding.run.index == 2 and finding.result.benchmark.key == "retinanet"
    broken.refresh_from_db()
    assert broken.status == "invalid"
    result = Result.objects.get()
    assert result.error_count >= 1 and not result.published


def test_the_submission_page_groups_findings_and_offers_the_json(client, broken, cast):
    client.force_login(cast["member_a"])
    page = client.get(f"/submissions/{broken.uid}/").content.decode()
    assert "System alpha" in page and "alpha › retinanet" in page
    assert "run.no-run-stop" in page and "result_2.txt" in page
    data = client.get(f"/submissions/{broken.uid}/findings.json").json()
    assert data["status"] == "invalid" and data["counts"]["error"] >= 1
    assert {"severity", "rule", "file", "line", "message", "hint"} <= set(data["findings"][0])


def test_the_report_command_prints_every_finding(broken, capsys):
    call_command("report", str(broken.pk))
    text = capsys.readouterr().out
    assert (
        f"Submission {broken.uid}" in text and "run.no-run-stop" in text and "result_2.txt:" in text
    )
    call_command("report", str(broken.pk), "--format", "json")
    data = json.loads(capsys.readouterr().out)
    assert len(data["findings"]) == Finding.objects.count()


def test_revalidation_replaces_findings_and_keeps_the_history(broken):
    before = sorted(Finding.objects.values_list("rule", "file", "line", "message"), key=repr)
    revalidate.delay(broken.pk, "test")
    broken.refresh_from_db()
    assert broken.status == "invalid"
    first, second = Validation.objects.order_by("number")
    assert (first.number, second.number, second.reason) == (1, 2, "test")
    assert first.verdict == second.verdict == "invalid"
    assert (
        sorted(second.findings.values_list("rule", "file", "line", "message"), key=repr) == before
    )
    assert first.findings.count() == second.findings.count()  # the first pass's findings are kept


def test_only_reviewers_can_ask_for_revalidation(client, broken, cast):
    client.force_login(cast["member_a"])
    response = client.post(f"/submissions/{broken.uid}/revalidate/")
    assert response.status_code == 302 and "/admin/login/" in response["Location"]
    assert Validation.objects.count() == 1
    client.force_login(cast["staff"])
    client.post(f"/submissions/{broken.uid}/revalidate/", {"reason": "rules fix"})
    assert list(Validation.objects.order_by("number").values_list("reason", flat=True)) == [
        "ingest",
        "rules fix",
    ]


def test_a_failed_submission_is_taken_in_again_when_a_reviewer_re_validates_it(
    client, broken, cast
):
    """The sweeper's "Gave up" message says a reviewer can re-validate it: the button does, from the bundle
    kept, and the pass that failed with it is closed rather than left running."""
    from submissions.checking import pipeline

    running = Validation.objects.create(submission=broken, number=2, reason="lost")
    pipeline.fail(
        broken.pk, "Gave up after 3 attempts ... a reviewer can re-validate it.", "gave-up"
    )
    assert Validation.objects.get(pk=running.pk).status == "abandoned"
    client.force_login(cast["staff"])
    client.post(f"/submissions/{broken.uid}/revalidate/", {"reason": "worker mended"})
    broken.refresh_from_db()
    assert (broken.status, broken.attempts, broken.rule) == ("invalid", 1, "")
    assert Validation.objects.filter(status="running").count() == 0


def test_a_revalidation_without_room_to_open_the_bundle_waits_and_changes_nothing(broken, settings):
    """A full disk is the site's fault: the submission keeps its verdict and findings (it failed with "could
    not open the bundle" before), and the re-validation runs once there is room."""
    settings.DISK_RESERVE_BYTES = 1 << 60
    revalidate.delay(broken.pk, "no room")
    broken.refresh_from_db()
    assert (broken.status, broken.rule) == ("invalid", "")
    assert Validation.objects.count() == 1
    settings.DISK_RESERVE_BYTES = 0
    revalidate.delay(broken.pk, "room again")
    broken.refresh_from_db()
    assert broken.status == "invalid" and Validation.objects.count() == 2


@pytest.mark.shared_rounds
def test_the_v06_round_as_history_shows_its_leaderboard_with_advisory_findings(client, rounds):
    call_command(
        "ingest",
        str(shared_tarball("training_v0.6_results.tar.xz")),
        "--round",
        "training-v0.6",
        "--publish",
    )
    assert set(Submission.objects.values_list("status", flat=True)) == {"published"}
    assert Finding.objects.filter(severity="error").exists()
    assert not Finding.objects.filter(advisory=False).exists()
    google = Result.objects.get(
        system__submitter__name="Google", system__key="tpu-v3-2048", benchmark__key="transformer"
    )
    assert google.published and google.advisory and google.error_count + google.warning_count > 0
    page = client.get("/r/training-v0.6/").content.decode()
    assert "tpu-v3-2048" in page


def test_the_public_result_page_lists_the_findings_of_a_published_result(client, rounds, tmp_path):
    call_command(
        "ingest",
        str(bundle_with_broken_runs(tmp_path, broken=(2,))),
        "--round",
        "training-v5.1",
        "--publish",
    )
    page = client.get("/r/training-v5.1/Acme/alpha/retinanet/").content.decode()
    assert "run.no-run-stop" in page and "result_2.txt" in page


def test_a_repeated_check_of_a_run_changes_nothing(broken):
    from submissions.checking import pipeline
    from submissions.models import RunCheck

    check = RunCheck.objects.first()
    before = (Finding.objects.count(), Submission.objects.get().runs_checked)
    assert pipeline.check_runs([check.run_id], check.validation_id) == []  # e.g. a redelivered task
    assert (Finding.objects.count(), Submission.objects.get().runs_checked) == before
    assert RunCheck.objects.filter(run_id=check.run_id).count() == 1


def test_a_batch_overlapping_runs_stored_before_stores_only_the_others(rounds, tmp_path):
    """A redelivered batch whose first runs were stored: those are not stored or counted again."""
    from leaderboard.models import Round
    from submissions.checking import pipeline
    from submissions.checking.bundles.split import split_folder
    from submissions.intake.submit import file_chunks, store_bundle
    from submissions.models import RunCheck

    [tar] = split_folder(
        bundle_with_broken_runs(tmp_path, broken=(2,)), tmp_path / "packed"
    ).values()
    relative, sha, size = store_bundle(file_chunks(tar), "acme.tar")
    submission = Submission.objects.create(
        round=Round.objects.get(key="training-v5.1"),
        bundle=relative,
        original_name="acme.tar",
        sha256=sha,
        size=size,
    )
    validation_id, run_ids = pipeline.ingest(submission.pk)
    assert pipeline.check_runs(run_ids[:3], validation_id) == []
    findings = Finding.objects.count()
    assert (
        Submission.objects.get().runs_checked == 3
        and Finding.objects.filter(rule="run.no-run-stop").count() == 1
    )
    assert pipeline.check_runs(run_ids[2:], validation_id) == [
        submission.pk
    ]  # completes: finalize is due
    assert (
        Submission.objects.get().runs_checked == 5
        and Submission.objects.get().status == "finalizing"
    )
    assert RunCheck.objects.count() == 5 and Finding.objects.count() == findings
    assert pipeline.check_runs(run_ids, validation_id) == []  # a third delivery: nothing at all
    assert Submission.objects.get().runs_checked == 5
