"""The pipeline end to end on generated bundles, with tasks run in-process."""

import hashlib
import re
import tarfile
from collections import Counter
from pathlib import Path

import pytest
from django.core.management import call_command

from leaderboard.models import Result, Run, System
from submissions.models import Finding, Submission
from submissions.synthetic.bundles import SystemSpec, write_bundle

# Every test here commits its writes: eager tasks run in on_commit hooks.
pytestmark = [pytest.mark.usefixtures("eager"), pytest.mark.django_db(transaction=True)]

TARGETS = {"retinanet": 0.34, "rgat": 0.72, "llama31_405b": 5.6}


def ingest(path, *extra, round_key="training-v5.1"):
    call_command("ingest", str(path), "--round", round_key, *extra)
    return Submission.objects.order_by("-pk").first()


@pytest.fixture
def bundle(tmp_path):
    systems = [
        SystemSpec(
            "alpha",
            results={
                "retinanet": [10.0, 12.0, 11.0, 13.0, 9.0],
                "llama31_405b": [100.0, 90.0, 95.0],
            },
        ),
        SystemSpec(
            "beta",
            status="Available cloud",
            nodes=2,
            results={"retinanet": [20.0, None, 21.0, 22.0, 23.0]},
        ),
    ]
    root = write_bundle(tmp_path / "src", "Acme", systems, TARGETS)
    archive = tmp_path / "acme.tgz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(root, arcname="Acme")
    return archive


def test_a_bundle_goes_through_ingest_checks_and_finalize(rounds, bundle):
    submission = ingest(bundle)
    assert submission.status == Submission.Status.VALID, submission.message
    assert submission.submitter.name == "Acme"
    assert (submission.runs_total, submission.runs_checked) == (13, 13)
    assert System.objects.filter(submission=submission).count() == 2
    assert Run.objects.filter(result__system__submission=submission, checked=True).count() == 13


def test_scores_are_olympic_means_of_the_logged_times(rounds, bundle):
    ingest(bundle)
    alpha = Result.objects.get(system__key="alpha", benchmark__key="retinanet")
    assert alpha.score_s == pytest.approx(11.0 * 60, abs=0.01)  # drop 9 and 13
    assert sorted(alpha.runs.filter(dropped=True).values_list("index", flat=True)) == [3, 4]
    llama = Result.objects.get(system__key="alpha", benchmark__key="llama31_405b")
    assert llama.score_s == pytest.approx(95.0 * 60, abs=0.01)


def test_a_failed_run_counts_as_the_slowest(rounds, bundle):
    ingest(bundle)
    beta = Result.objects.get(system__key="beta", benchmark__key="retinanet")
    assert beta.score_s == pytest.approx(
        22.0 * 60, abs=0.01
    )  # drop 20 and the failure: mean(21, 22, 23)
    failed = beta.runs.get(index=1)
    assert not failed.success and failed.dropped
    assert "aborted" in failed.failure_reason


def test_system_fields_come_from_the_system_json(rounds, bundle):
    ingest(bundle)
    beta = System.objects.get(key="beta")
    assert (beta.category, beta.accelerator_count, beta.nodes) == ("cloud", 16, 2)


def test_two_failed_runs_make_the_submission_invalid(rounds, tmp_path):
    systems = [SystemSpec("gamma", results={"retinanet": [10.0, None, None, 12.0, 11.0]})]
    root = write_bundle(tmp_path, "Acme", systems, TARGETS)
    submission = ingest(root)
    assert submission.status == Submission.Status.INVALID
    finding = Finding.objects.get(rule="result.no-score")
    assert (finding.severity, finding.file) == ("error", "Acme/results/gamma/retinanet")
    assert "2 of 5 runs failed; at most 1 may fail" in finding.message


def test_the_same_bundle_twice_is_one_submission(rounds, bundle):
    first = ingest(bundle)
    second = ingest(bundle)
    assert first.pk == second.pk
    assert Submission.objects.count() == 1


def test_publish_shows_only_scored_results_and_withdraws_the_earlier_upload(
    rounds, bundle, tmp_path
):
    first = ingest(bundle, "--publish")
    assert first.status == Submission.Status.PUBLISHED
    assert Result.objects.filter(published=True).count() == 3
    systems = [SystemSpec("alpha", results={"retinanet": [5.0, 5.0, 5.0, 5.0, 5.0]})]
    second = ingest(write_bundle(tmp_path / "v2", "Acme", systems, TARGETS), "--publish")
    first.refresh_from_db()
    assert (first.status, second.status) == (
        Submission.Status.WITHDRAWN,
        Submission.Status.PUBLISHED,
    )
    assert list(Result.objects.filter(published=True).values_list("score_s", flat=True)) == [300.0]


def test_a_folder_with_several_submitters_becomes_one_submission_each(rounds, tmp_path):
    for org in ("One", "Two"):
        write_bundle(
            tmp_path / "round", org, [SystemSpec("s", results={"rgat": [1.0] * 10})], TARGETS
        )
    ingest(tmp_path / "round")
    assert sorted(Submission.objects.values_list("submitter__name", flat=True)) == ["One", "Two"]
    assert set(Submission.objects.values_list("status", flat=True)) == {"valid"}


def test_export_lists_every_result_of_the_round(rounds, bundle, capsys):
    ingest(bundle, "--publish")
    capsys.readouterr()
    call_command("export_results", "--round", "training-v5.1", "--format", "csv")
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0] == (
        "public_id,submitter,system,division,category,benchmark,runs_counted,score_minutes,speedup,"
        "scaling_factor,claimed_scaling_factor,not_scored_because,path,energy_kj,"
        "energy_not_scored_because"
    )
    assert (
        "5.1-0002,Acme,alpha,closed,onprem,retinanet,3,11.0,,1.0,,,Acme/results/alpha/retinanet,,"
        in lines
    )
    assert len(lines) == 1 + 3


def test_wait_exits_non_zero_when_a_submission_fails(rounds, tmp_path):
    bad = tmp_path / "bad.tgz"
    bad.write_bytes(b"this is not an archive")
    with pytest.raises(Exception, match="did not pass"):
        ingest(bad, "--wait")


def test_wait_reports_the_findings_of_each_submission(rounds, tmp_path, capsys):
    systems = [SystemSpec("gamma", results={"retinanet": [10.0, None, None, 12.0, 11.0]})]
    root = write_bundle(tmp_path / "b", "Acme", systems, TARGETS)
    with pytest.raises(Exception, match="1 of 1 submissions did not pass"):
        ingest(root, "--wait")
    submission = Submission.objects.get()
    counts = Counter(
        Finding.objects.filter(validation__submission=submission).values_list("severity", flat=True)
    )
    assert counts["error"]
    assert (
        f"#{submission.pk} {submission.original_name}: invalid; findings: {counts['error']} errors, "
        f"{counts['warning']} warnings, {counts['info']} info."
    ) in capsys.readouterr().out


def test_recording_a_bundle_takes_the_same_queries_however_large_it_is(rounds, tmp_path):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from submissions.checking import pipeline
    from submissions.intake.submit import file_chunks, store_bundle

    def queries_to_record(name, systems):
        root = write_bundle(tmp_path / name, name, systems, TARGETS)
        relative, sha, size = store_bundle(
            file_chunks(_tar(root, tmp_path / f"{name}.tgz")), f"{name}.tgz"
        )
        submission = Submission.objects.create(
            round=rounds["training-v5.1"],
            bundle=relative,
            original_name=name,
            sha256=sha,
            size=size,
        )
        with CaptureQueriesContext(connection) as captured:
            _, run_ids = pipeline.ingest(submission.pk)
        return len(captured), len(run_ids)

    small = queries_to_record("Small", [SystemSpec("a", results={"retinanet": [10.0] * 5})])
    large = queries_to_record(
        "Large",
        [
            SystemSpec(f"s{i}", results={"retinanet": [10.0] * 5, "rgat": [5.0] * 10})
            for i in range(4)
        ],
    )
    assert (small[1], large[1]) == (5, 60)
    assert small[0] == large[0]


def _tar(root, archive):
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(root, arcname=root.name)
    return archive


def test_nan_and_infinity_in_logs_and_descriptions_are_stored_not_crashed_on(rounds, tmp_path):
    """json reads NaN and Infinity; PostgreSQL's JSON refuses them, so they are stored as strings."""
    root = write_bundle(
        tmp_path / "src", "Acme", [SystemSpec("alpha", results={"rgat": [10.0] * 10})], TARGETS
    )
    desc = root / "systems" / "alpha.json"
    desc.write_text(
        desc.read_text().replace("{", '{"odd_number": NaN, "odd": [Infinity, -Infinity],', 1)
    )
    log = root / "results" / "alpha" / "rgat" / "result_0.txt"
    text = re.sub(r'("key": "global_batch_size", "value": )\d+', r"\1NaN", log.read_text())
    log.write_text(re.sub(r'("key": "opt_name", "value": )"\w+"', r"\1Infinity", text))
    submission = ingest(root)
    assert submission.is_final and submission.status != Submission.Status.FAILED, submission.message
    run = Run.objects.get(path__endswith="rgat/result_0.txt")
    assert (
        run.hyperparameters["global_batch_size"] == "NaN"
        and run.hyperparameters["opt_name"] == "Infinity"
    )
    assert "not a finite number" in run.convergence["error"]
    system = System.objects.get()
    assert system.description["odd_number"] == "NaN" and system.description["odd"] == [
        "Infinity",
        "-Infinity",
    ]


def test_a_submitter_whose_files_are_not_together_in_the_archive_is_submitted_whole(
    rounds, tmp_path
):
    """The part handed over before the rest of its files turned up is withdrawn for the whole one."""
    specs = {
        "Acme": [SystemSpec("alpha", results={"retinanet": [10.0, 11.0, 12.0, 13.0, 14.0]})],
        "Bolt": [SystemSpec("beta", results={"retinanet": [20.0, 21.0, 22.0, 23.0, 24.0]})],
    }
    roots = {
        name: write_bundle(tmp_path / name, name, systems, TARGETS)
        for name, systems in specs.items()
    }
    files = {
        name: sorted(p for p in root.rglob("*") if p.is_file()) for name, root in roots.items()
    }
    archive = tmp_path / "round.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:  # Acme's logs, Bolt, then Acme's system description
        for path in [*files["Acme"][:-1], *files["Bolt"], files["Acme"][-1]]:
            name = next(n for n, r in roots.items() if path.is_relative_to(r))
            tar.add(path, arcname=f"{name}/{path.relative_to(roots[name])}")
    call_command("ingest", str(archive), "--round", "training-v5.1", "--publish")
    by_status = {s.original_name: s.status for s in Submission.objects.order_by("pk")}
    acme = Submission.objects.filter(original_name__endswith="Acme").order_by("pk")
    assert [s.status for s in acme] == ["withdrawn", "published"], by_status
    assert "Superseded by" in acme[0].message
    assert System.objects.get(submission=acme[1]).description  # the whole part has the description
    assert not Result.objects.filter(system__submission=acme[0], published=True).exists()
    assert Submission.objects.get(original_name__endswith="Bolt").status == "published"
    for submission in Submission.objects.all():  # stored as hashed while split, or copied
        assert (
            hashlib.sha256(Path(submission.bundle.path).read_bytes()).hexdigest()
            == submission.sha256
        )


def test_update_rows_gives_each_row_its_values_sharing_statements_between_alike_rows(
    rounds, monkeypatch
):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from submissions.checking.pipeline.update_rows import update_rows
    from tests import leaderboard_factories as make

    result = make.result(make.system(rounds["training-v5.1"]), "retinanet", 10.0, runs=6)
    runs = list(result.runs.order_by("index"))
    marks = [
        (True, False),
        (True, False),
        (False, True),
        (True, False),
        (False, False),
        (False, True),
    ]
    with CaptureQueriesContext(connection) as captured:
        update_rows(
            Run, [(run.pk, {"counted": c, "dropped": d}) for run, (c, d) in zip(runs, marks)]
        )
    assert (
        len(captured) == 3
    )  # one statement per set of values: (T, F) x3, (F, T) x2, and the one (F, F) row
    assert [(r.counted, r.dropped) for r in result.runs.order_by("index")] == marks

    monkeypatch.setattr(
        connection.ops, "bulk_batch_size", lambda fields, objs: 2
    )  # as SQLite's, smaller
    flipped = [(not c, not d) for c, d in marks]
    with CaptureQueriesContext(connection) as captured:
        update_rows(
            Run, [(run.pk, {"counted": c, "dropped": d}) for run, (c, d) in zip(runs, flipped)]
        )
    assert len(captured) == 4  # (F, T) x3 in two statements
    assert [(r.counted, r.dropped) for r in result.runs.order_by("index")] == flipped

    curves = [{"eval_curve": [[1, i]], "seed": str(i)} for i in range(5)] + [{"seed": "x"}]
    update_rows(Run, [(run.pk, fields) for run, fields in zip(runs, curves)])
    stored = list(result.runs.order_by("index").values_list("eval_curve", "seed"))
    assert stored[:5] == [([[1, i]], str(i)) for i in range(5)] and stored[5][1] == "x"
