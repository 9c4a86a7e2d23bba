"""Run logs named or placed otherwise, and result folders without a log, through the pipeline (tasks in-process)."""

import shutil

import pytest
from django.core.management import call_command

from leaderboard.models import Result
from submissions.checking.tasks import revalidate
from submissions.models import Finding, Submission
from submissions.synthetic.bundles import SystemSpec, write_bundle

# Every test here commits its writes: eager tasks run in on_commit hooks.
pytestmark = [pytest.mark.usefixtures("eager"), pytest.mark.django_db(transaction=True)]

TARGETS = {"rgat": 0.72}


def ingest(path, *extra):
    call_command("ingest", str(path), "--round", "training-v5.1", *extra)
    return Submission.objects.order_by("-pk").first()


def findings(submission, rule):
    return list(
        Finding.objects.filter(validation__submission=submission, rule=rule).order_by("file")
    )


@pytest.fixture
def untidy(tmp_path):
    """alpha: rgat logs named result_N.txt and otherwise; beta: its rgat logs directly in its system folder;
    gamma: an rgat folder without one readable log, and an empty llama31_8b folder."""
    minutes = [10.0, 12.0, 11.0, 13.0, 9.0, 10.5, 11.5, 12.5, 9.5, 10.0]
    root = write_bundle(
        tmp_path / "src",
        "Acme",
        [
            SystemSpec("alpha", results={"rgat": minutes}),
            SystemSpec("beta", results={"rgat": minutes}),
            SystemSpec("gamma", results={"rgat": minutes}),
        ],
        TARGETS,
    )
    alpha, beta, gamma = (root / "results" / name for name in ("alpha", "beta", "gamma"))
    (alpha / "rgat/result_3.txt").rename(alpha / "rgat/result_3.log")
    (alpha / "rgat/result_7.txt").rename(alpha / "rgat/result_7_retry.txt")
    for log in sorted((beta / "rgat").iterdir()):
        log.rename(beta / f"beta_{log.name}")
    (beta / "rgat").rmdir()
    shutil.rmtree(gamma / "rgat")
    (gamma / "rgat").mkdir()
    (gamma / "rgat/stdout.txt").write_text(
        "Traceback (most recent call last):\nRuntimeError: CUDA out of memory\n"
    )
    (gamma / "llama31_8b").mkdir()
    return root


def test_an_untidy_bundle_reads_every_log_and_keeps_every_result_folder(rounds, untidy):
    submission = ingest(untidy, "--publish")
    assert submission.status != Submission.Status.FAILED, submission.message

    # Logs named or placed otherwise are read, and each gets a warning that names the expected form.
    alpha = Result.objects.get(system__key="alpha", benchmark__key="rgat")
    beta = Result.objects.get(system__key="beta", benchmark__key="rgat")
    for result in (
        alpha,
        beta,
    ):  # all ten runs, numbered as their names say, scored as with the rules' names
        assert list(result.runs.values_list("index", flat=True)) == list(range(10))
        assert result.score_s == pytest.approx(10.875 * 60, abs=0.01), (
            result.score_message
        )  # the 8 middle runs
    assert alpha.runs.get(index=3).path == "Acme/results/alpha/rgat/result_3.log"
    assert beta.path == "Acme/results/beta"
    for result in (
        alpha,
        beta,
    ):  # the RCP check reads every run under its rules' name, wherever it lies
        assert Finding.objects.filter(result=result, rule="result.rcp", severity="info").exists()
        assert not Finding.objects.filter(
            result=result, rule="result.rcp", severity="error"
        ).exists()

    named = findings(submission, "bundle.log-name")
    assert [(f.severity, f.file, f.run.index) for f in named] == [
        ("warning", "Acme/results/alpha/rgat/result_3.log", 3),
        ("warning", "Acme/results/alpha/rgat/result_7_retry.txt", 7),
    ]
    assert "Rename it Acme/results/alpha/rgat/result_3.txt" in named[0].hint
    placed = findings(submission, "bundle.log-place")
    assert len(placed) == 10 and {f.severity for f in placed} == {"warning"}
    assert placed[0].file == "Acme/results/beta/beta_result_0.txt"
    assert "Move it to Acme/results/beta/rgat/result_0.txt" in placed[0].hint

    # A result folder without a readable log is a result with no score, and a finding that says why.
    rgat = Result.objects.get(system__key="gamma", benchmark__key="rgat")
    llama = Result.objects.get(system__key="gamma", benchmark__key="llama31_8b")
    for result in (rgat, llama):
        assert (result.score_s, result.runs.count(), result.path) == (
            None,
            0,
            f"Acme/results/gamma/{result.benchmark.key}",
        )
    why = {f.result_id: f for f in findings(submission, "bundle.no-run-log")}
    assert set(why) == {rgat.pk, llama.pk}
    why_rgat, why_llama = why[rgat.pk], why[llama.pk]
    assert why_rgat.severity == "error" and why_rgat.result_id == rgat.pk
    assert why_rgat.message == (
        "No run log found for rgat: none of the files in Acme/results/gamma/rgat/ holds "
        "MLPerf log lines (stdout.txt)."
    )
    assert (
        why_llama.message
        == "No run log found for llama31_8b: the folder Acme/results/gamma/llama31_8b/ is empty."
    )
    assert "result_0.txt" in why_llama.hint
    # The other results of the bundle are scored beside them.
    assert Result.objects.filter(system__submission=submission, score_s__isnull=False).count() == 2

    # A second validation (after a rules fix) says the same about the bundle's layout.
    bundle_rules = ["bundle.log-name", "bundle.log-place", "bundle.no-run-log"]
    first = sorted(
        Finding.objects.filter(rule__in=bundle_rules).values_list(
            "rule", "file", "run_id", "result_id"
        )
    )
    revalidate.delay(submission.pk, "rules fix")
    latest = submission.validations.order_by("-number").first()
    assert latest.number == 2
    assert (
        sorted(
            latest.findings.filter(rule__in=bundle_rules).values_list(
                "rule", "file", "run_id", "result_id"
            )
        )
        == first
        and len(first) == 14
    )


def test_a_bundle_with_nothing_readable_fails_as_a_whole_saying_why(rounds, tmp_path):
    root = write_bundle(
        tmp_path / "src", "Acme", [SystemSpec("alpha", results={"rgat": [10.0] * 10})], TARGETS
    )
    shutil.rmtree(root / "results/alpha/rgat")
    (root / "results/alpha/rgat").mkdir()
    (root / "results/alpha/rgat/notes.txt").write_text("logs to follow\n")
    (root / "results/alpha/other.log").write_text("MLPerf: not quite\n")
    submission = ingest(root)
    assert submission.status == Submission.Status.FAILED
    assert submission.rule == "layout.no-results"
    assert "No run logs" in submission.message
