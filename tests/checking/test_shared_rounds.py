"""Each shared MLPerf round as MLCommons published it: ingested once from its tarball by a real worker on
PostgreSQL and Redis, as an operator imports history (`ingest --publish`), and set beside mlperf-logging run
once on a copy of the round (tests/summarizer.py; never the portal's own output).

One test per round, because ingesting a round and running mlperf-logging over it are what cost (v1.0 and v4.0:
560-590 MB of logs each, minutes each), and every comparison below reads the same two. Each comparison is a
function that returns its disagreements; the test prints them all, then fails on any:

- scores: every result that the result summarizer scores has the portal's score within 0.1%; the results
  left out (LEFT_OUT) are only folders that lack logs MLCommons had;
- runs: no run has an error of a clock rule (the forgery rule tells a moved run_stop from a real log that goes
  on after it); every run the summarizer counts is a successful run; from ruleset 1.0.0 on a run fails exactly
  when the checker of its ruleset fails it or the run says it failed;
- verdicts: each submitter's verdict next to package_checker's; where they differ, the portal's errors are
  rules of docs/divergences.md, or package_checker's reasons are ones the portal judges otherwise on purpose
  (EXPLAINED), or package_checker crashed (no verdict);
- the round's own spot checks (SPOT_CHECKS): counts and scores worked out by hand from the logs.

mlperf-logging has no ruleset 0.5.0 (its parser does not read `:::MLPv0.5.0` lines): v0.5 gets the clock
comparison and its spot checks only. Every round is marked `whole_rounds`: `make test-rounds` runs them (CI
after `make test`), and `make test` skips them, saying so.
"""

import csv
import io
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import parse_qs, unquote, urlsplit

import pytest
from django.core.management import call_command
from django.db import connection
from django.urls import resolve

from leaderboard.catalogue import rule_catalogue
from leaderboard.models import Benchmark, Result, Run, System
from submissions.checking.pipeline.publication import held_results
from submissions.checking.rules.mlperf import compliance
from submissions.checking.rules.mlperf.divergences import DIVERGENCES
from submissions.models import Finding, Submission

from .. import summarizer
from ..conftest import shared_tarball
from ..worker import media, media_root, worker  # noqa: F401 (fixtures)

# transaction=True: the worker process, and the ingest's thread, read what the test writes.
pytestmark = [
    pytest.mark.services,
    pytest.mark.shared_rounds,
    pytest.mark.whole_rounds,
    pytest.mark.django_db(transaction=True),
]

ROUNDS = [  # round, tarball, mlperf-logging ruleset (None: it has none)
    ("training-v0.5", "training_v0.5_results.tar.xz", None),
    ("training-v0.6", "training_v0.6_results.tar.xz", "0.6.0"),
    ("training-v1.0", "training_v1.0_results.tar.xz", "1.0.0"),
    ("training-v4.0", "training_v4.0_results.tar.xz", "4.0.0"),
    ("training-v5.1", "training_v5.1_results.tar.xz", "5.1.0"),
]

MISSING = "logs missing from the public snapshot (../shared/mlperf/README.md)"
# The results the score comparison leaves out: only folders that lack logs MLCommons had (the README lists
# them), so that the summarizer, given this copy, does not score what was published. The test checks each one
# holds fewer logs than its benchmark requires.
LEFT_OUT = {
    "training-v1.0": {
        ("Dell", "XE8545x4A100-SXM-80GB", "bert"): MISSING,
        ("NVIDIA", "dgxa100_n128_ngc21.05_mxnet", "resnet"): MISSING,
        ("NVIDIA", "dgxa100_n128_ngc21.05_pytorch", "bert"): MISSING,
        ("NVIDIA", "dgxa100_n192_ngc21.05_pytorch", "rnnt"): MISSING,
        ("NVIDIA", "dgxa100_n310_ngc21.05_mxnet", "resnet"): MISSING,
        ("NVIDIA", "dgxa100_n34_ngc21.05_pytorch", "maskrcnn"): MISSING,
        ("NVIDIA", "dgxa100_n4_ngc21.05_pytorch", "maskrcnn"): MISSING,
        ("NVIDIA", "dgxa100_n512_ngc21.05_pytorch", "bert"): MISSING,
        ("Supermicro", "as-2124gq-nart+", "maskrcnn"): MISSING,
        ("Supermicro", "as-4142gs-tnr", "maskrcnn"): MISSING,
    },
    "training-v4.0": {
        ("JuniperNetworks", "a100_n8_ngc23.09_pytorch", "bert"): MISSING,
        ("JuniperNetworks", "h100_n4_ngc23.09_pytorch", "bert"): MISSING,
        ("JuniperNetworks", "h100_n4_ngc23.09_merlin_hugectr", "dlrm_dcnv2"): MISSING,
    },
}

# package_checker's reasons the portal judges otherwise on purpose (docs/divergences.md), by the rule it makes
# a warning of instead: today's status values on older rulesets, runs that log no seed.
EXPLAINED = {
    "Field status contains a non valid value": "system.invalid-field",
    "logs no seed": "result.seeds-distinct",
    "Seed checker failed": "result.seeds-distinct",
}
# Rulesets whose descriptions the installed result_summarizer writes no row for, and why.
NO_ROWS = {
    "0.6.0": (
        "mlperf-logging's result_summarizer (4.1.68) writes no table for any v0.6 submitter: Fujitsu's and "
        "Intel's descriptions lack fields it reads (submitter, number_of_nodes ...) and its handler of that "
        "FieldError raises NameError (system_file, result_summarizer.py line 1042); it crashes on Google's mask "
        "folders (no training_0.6.0/mask.yaml); NVIDIA's descriptions are log lines, not JSON; Alibaba's sinian "
        "has none"
    ),
}
# A run's own word that it failed: no checker is needed to fail it.
RUN_SAYS_FAILED = {"run.not-successful", "run.no-run-stop", "run.no-run-start"}


# --- the round, both ways --------------------------------------------------------------------------------------


def ingest_round(key, tarball):
    """The operator's import of history, then the round's report (printed with the test's output: what became
    of each result). Runs in a thread beside mlperf-logging, so it closes its own database connection."""
    try:
        call_command(
            "ingest", str(shared_tarball(tarball)), "--round", key, "--publish", "--wait",
            "--timeout", "1800",
        )  # fmt: skip
        call_command("round_report", "--round", key)
    finally:
        connection.close()


class MLCommons:
    """mlperf-logging's side of one round (tests/summarizer.py), on an unpacked copy under `root`."""

    def __init__(self, tarball, ruleset, tmp_path):
        self.ruleset = ruleset
        self.root = summarizer.unpack(shared_tarball(tarball), tmp_path / "round")
        self.out = tmp_path / "out"  # the command's table per submitter (summarizer.summary_rows)
        self.out.mkdir()
        side = (
            summarizer.round_side(self.root, ruleset, self.out)
            if ruleset is not None
            else summarizer.Round({}, {}, {})
        )
        self.scores, self.logs, self.packages = side.scores, side.logs, side.packages


def both_sides(key, tarball, ruleset, tmp_path) -> MLCommons:
    """The portal ingests the round while mlperf-logging reads the copy: one waits on the worker, the other
    works, so the two share the machine's cores."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        ingesting = pool.submit(ingest_round, key, tarball)
        mlcommons = MLCommons(tarball, ruleset, tmp_path)
        ingesting.result()
    return mlcommons


# --- the comparisons: each returns its disagreements -----------------------------------------------------------


def portal_results(round_key):
    """{(submitter, system, benchmark folder): Result} of the round, by the folder each was read from."""
    table = {}
    for result in Result.objects.filter(system__round__key=round_key):
        submitter, _, system, folder = result.path.split("/")[-4:]
        table[(submitter, system, folder)] = result
    return table


def held_rules(round_key):
    """{rule id: results it holds back} over the round's submissions (the first blocking finding of each)."""
    return Counter(
        held.finding.rule
        for submission in Submission.objects.filter(round__key=round_key)
        for held in held_results(submission)
    )


def score_disagreements(round_key, mlcommons, required_runs):
    expected, portal = mlcommons.scores, portal_results(round_key)
    left_out = LEFT_OUT.get(round_key, {})
    scored = {k: e for k, e in expected.items() if e.minutes is not None}
    equal, wrong = 0, []
    for key, e in sorted(scored.items()):
        result = portal.get(key)
        minutes = None if result is None or result.score_s is None else result.score_s / 60
        if minutes is not None and minutes == pytest.approx(e.minutes, rel=1e-3):
            equal += 1
        elif key not in left_out:
            wrong.append(
                f"{'/'.join(key)}: summarizer {e.minutes:.4f} min ({e.how}), portal {minutes}"
            )
    print(
        f"{round_key} scores: {len(expected)} result folders, {len(scored)} scored by the summarizer "
        f"({sum(e.how != 'command' for e in scored.values())} by its scoring function), "
        f"{sum(r.score_s is not None for r in portal.values())} scored by the portal, "
        f"{equal} equal within 0.1%, {sum(r.published for r in portal.values())} public, "
        f"held: {dict(held_rules(round_key))}"
    )
    for key, why in left_out.items():
        print(f"  left out: {'/'.join(key)}: {why}")
    for key, e in sorted(expected.items()):
        if e.minutes is None and key not in left_out:
            result = portal.get(key)
            got = None if result is None or result.score_s is None else result.score_s / 60
            print(f"  not scored by the summarizer ({e.how}): {'/'.join(key)}; portal: {got}")
    if set(portal) != set(expected):  # every result folder is a result of the portal
        wrong.append(f"result folders differ: {sorted(set(portal) ^ set(expected))[:10]}")
    for submitter, system, folder in left_out:  # each holds fewer logs than its benchmark needs
        logs = list((mlcommons.root / submitter / "results" / system / folder).glob("result_*.txt"))
        result = portal.get((submitter, system, folder))
        if result is None or len(logs) >= required_runs[result.benchmark.key]:
            wrong.append(f"left out but not short of logs: {submitter}/{system}/{folder}")
    return wrong


def run_disagreements(round_key, mlcommons):
    runs = Run.objects.filter(result__system__round__key=round_key)
    errors = {}  # run id: its error rules
    for run_id, rule in Finding.objects.filter(
        run__in=runs, severity=Finding.Severity.ERROR
    ).values_list("run", "rule"):
        errors.setdefault(run_id, set()).add(rule)
    judged = mlcommons.ruleset is not None and compliance.gives_verdict(mlcommons.ruleset)
    wrong, counted, failed_counted = [], 0, 0
    for run in runs.only("pk", "path", "success", "failure_reason"):
        own = errors.get(run.pk, set())
        if own & set(rule_catalogue.UNTIMED_RULES):
            wrong.append(
                f"{run.path}: clock errors {sorted(own & set(rule_catalogue.UNTIMED_RULES))}"
            )
        verdict = mlcommons.logs.get(run.path)
        if verdict is None:
            continue
        if verdict.counted:
            counted += 1
            if not run.success:
                failed_counted += 1
                wrong.append(f"{run.path}: the summarizer counts it; failed: {run.failure_reason}")
        if judged and run.success != bool(verdict.passes and not own & RUN_SAYS_FAILED):
            wrong.append(
                f"{run.path}: checker passes={verdict.passes}, portal success={run.success} "
                f"({run.failure_reason})"
            )
    print(
        f"{round_key} runs: {runs.count()}, {counted} counted by the summarizer, "
        f"{failed_counted} of them failed in the portal"
    )
    if mlcommons.ruleset is not None and counted == 0:
        wrong.append("the summarizer counted no run: the comparison compared nothing")
    return wrong


def explained(reason: str, ruleset: str, found: set[str]) -> bool:
    """A reason of package_checker's that a divergence explains: its rule is among the submission's findings
    (see EXPLAINED); before 1.0.0 its compliance verdicts too (mlperf.compliance)."""
    if any(p in reason and rule in found and rule in DIVERGENCES for p, rule in EXPLAINED.items()):
        return True
    return not compliance.gives_verdict(ruleset) and "do not comply" in reason


def verdict_disagreements(round_key, mlcommons):
    table, unexplained = [], []
    for submission in Submission.objects.filter(round__key=round_key).order_by("pk"):
        first = (
            Run.objects.filter(result__system__submission=submission)
            .values_list("path", flat=True)
            .first()
        )
        if first is None:
            continue
        submitter = first.split("/")[0]
        passes, reasons = mlcommons.packages[submitter]
        # The verdict of its check (published or not: imported history publishes what MLCommons did).
        portal = submission.validations.latest("pk").verdict == Submission.Status.VALID
        findings = Finding.objects.filter(validation__submission=submission)
        errors = Counter(findings.filter(severity="error").values_list("rule", flat=True))
        table.append((submitter, portal, passes, dict(errors)))
        if passes is None or passes == portal:
            continue
        if passes and not portal:  # the portal is stricter: only by rules of its own
            own = set(errors) - set(DIVERGENCES)
            if own:
                unexplained.append(f"{submitter}: portal errors {sorted(own)}")
        else:  # package_checker is stricter: only by rules of another time
            found = set(findings.values_list("rule", flat=True))
            other = [r for r in reasons if not explained(r, mlcommons.ruleset, found)]
            if other:
                unexplained.append(f"{submitter}: package_checker {other[:5]}")
    agree = sum(1 for _, portal, passes, _ in table if passes is not None and passes == portal)
    judged = sum(1 for _, _, passes, _ in table if passes is not None)
    print(
        f"{round_key} verdicts: agree for {agree} of {judged} submitters package_checker judged "
        f"({len(table)} in all)"
    )
    for row in table:
        print("  ", row)
    return unexplained


def csv_rows(client, round_key):
    """The round's CSV (every column, times in minutes), by (submitter folder, system key): the folder from the
    row's system's results, which the CSV's System URL names (with `?system=<uid>` where folders published side
    by side share a submitter and key)."""
    response = client.get(f"/r/{round_key}/", {"format": "csv", "show": "minutes"})
    assert response.status_code == 200
    rows = {}
    for row in csv.DictReader(io.StringIO(response.content.decode())):
        url = urlsplit(row["System URL"])
        uid = parse_qs(url.query).get("system")
        args = resolve(unquote(url.path)).kwargs  # the path as the server routes it: decoded once
        systems = System.objects.filter(round__key=round_key, published=True)
        system = (
            systems.get(uid=uid[0])
            if uid
            else systems.get(submitter__name=args["submitter"], key=args["system_key"])
        )
        folder = system.results.values_list("path", flat=True)[0].split("/")[0]
        rows[(folder, system.key)] = row
    return rows


def row_disagreements(round_key, mlcommons, client):
    """Every row of the summarizer's table (a row per system whose description it reads) against the portal's
    CSV row of that system: each column of summarizer.ROW_COLUMNS and each score the row gives. The scores of
    LEFT_OUT folders are not compared (the summarizer scores the logs this copy lacks)."""
    portal = csv_rows(client, round_key)
    by_folder = {}
    for bench in Benchmark.objects.filter(round__key=round_key):
        for name in [bench.key, *bench.aliases]:
            by_folder[name.lower()] = f"{bench.name} (minutes)"
    left_out = LEFT_OUT.get(round_key, {})
    wrong, rows, equal_rows, scored, equal_scores = [], 0, 0, 0, 0
    for submitter in sorted(mlcommons.packages):
        for row in summarizer.summary_rows(mlcommons.out, submitter):
            rows += 1
            key = (submitter, summarizer.system_file(row))
            got = portal.get(key)
            if got is None:
                wrong.append(f"{'/'.join(key)}: no row in the portal's CSV")
                continue
            headings = {
                column: by_folder[column]
                for column in row
                if column in by_folder and (*key, column) not in left_out
            }
            differences, compared, equal = summarizer.row_differences(
                row, got, headings, mlcommons.ruleset
            )
            scored, equal_scores = scored + compared, equal_scores + equal
            equal_rows += not differences
            wrong += [f"{'/'.join(key)} {d}" for d in differences]
    print(
        f"{round_key} rows: {equal_rows} of the summarizer's {rows} rows equal the portal's CSV rows "
        f"({len(portal)} in the CSV); {equal_scores} of its {scored} scores equal"
    )
    if rows == 0 and mlcommons.ruleset in NO_ROWS:
        print(f"  {round_key}: no row to compare: {NO_ROWS[mlcommons.ruleset]}")
    elif rows == 0:
        wrong.append("the summarizer gave no row: the comparison compared nothing")
    return wrong


# --- each round's spot checks: counts and scores worked out by hand from the logs ------------------------------

EXPECTED_COUNTS = {  # (systems, results, runs), counted from the unpacked trees: every benchmark folder is a
    # result, with or without logs (v0.5: Intel's 4 and NVIDIA's 8 empty ones; v0.6: 2 MiniGo; v5.1: Dell's
    # llama2_70b_lora)
    "training-v0.5": (24, 47, 600),
    "training-v0.6": (32, 63, 430),
    "training-v5.1": (91, 185, 1669),
}


def result(round_key, submitter, system, benchmark):
    return Result.objects.get(
        system__round__key=round_key,
        system__submitter__name=submitter,
        system__key=system,
        benchmark__key=benchmark,
    )


def counts(round_key):
    return (
        System.objects.filter(round__key=round_key).count(),
        Result.objects.filter(system__round__key=round_key).count(),
        Run.objects.filter(result__system__round__key=round_key).count(),
    )


def spot_check_v05():
    assert Submission.objects.filter(round__key="training-v0.5").count() == 3
    assert counts("training-v0.5") == EXPECTED_COUNTS["training-v0.5"]
    resnet = Result.objects.get(
        system__round__key="training-v0.5",
        path__endswith="cloud_v2.8/resnet-tpuv2-8/results/tpu/resnet",
    )
    assert round(resnet.score_s / 60, 2) == 301.58
    assert round(resnet.speedup, 2) == 29.28
    assert resnet.published
    pods = [
        Result.objects.get(
            system__round__key="training-v0.5", path__endswith=f"{pod}/results/tpu/resnet"
        ).system
        for pod in ("cloud_v2.512/resnet-tpuv2-512", "research_v3.32/resnet-tpuv3-32")
    ]
    assert [(pod.accelerator_count, pod.nodes) for pod in pods] == [
        (512, 64),
        (32, 2),
    ]  # not 64 x 512


def spot_check_v06():
    key = "training-v0.6"
    assert counts(key) == EXPECTED_COUNTS[key]
    assert round(result(key, "Google", "tpu-v3-2048", "transformer").score_s / 60, 2) == 0.85
    assert round(result(key, "Google", "tpu-v3-32", "gnmt").score_s / 60, 2) == 12.25
    assert round(result(key, "NVIDIA", "dgx1_ngc19.05_mxnet", "resnet").score_s / 60, 2) == 115.22
    assert result(key, "Google", "tpu-v3-2048", "transformer").speedup is None
    described = System.objects.filter(
        round__key=key,
        key__in=["abci_2048xV100_mxnet", "clx-8260l-2s-x32", "dgx2h_n96_ngc19.05_mxnet"],
    )
    assert sorted(
        described.values_list("key", "accelerator_count", "nodes", "processor_count")
    ) == [
        ("abci_2048xV100_mxnet", 2048, 512, 1024),  # written as an entry.json
        ("clx-8260l-2s-x32", 0, 32, 64),  # "number of nodes"; CPU only: 0 accelerators stated
        ("dgx2h_n96_ngc19.05_mxnet", 1536, 96, 192),  # log lines, a Python literal inside
    ]
    # Nothing silently absent: every result is public (imported history), with a score or the reason it has none.
    results = Result.objects.filter(system__round__key=key)
    assert not results.filter(published=False).exists()
    assert not results.filter(score_s__isnull=True, score_message="").exists()
    # NVIDIA's MiniGo logs have no run_stop: its round's rules (0.6.0's minigo.yaml) time a run by its
    # eval_result, so the result is scored (and compared with the summarizer's above).
    minigo = result(key, "NVIDIA", "dgx1_ngc19.05_tensorflow", "minigo")
    assert minigo.score_s is not None and minigo.runs.filter(success=True).count() == 10
    assert result(key, "Alibaba", "sinian", "resnet").published
    systems = System.objects.filter(round__key=key)
    assert not systems.filter(accelerator_count__isnull=True).exists()
    assert sorted(systems.filter(accelerator_model="").values_list("key", flat=True)) == [
        "clx-8260l-2s-x32",
        "clx-9282-2s-x1",
    ]  # Intel's CPU-only systems


def spot_check_v51():
    key = "training-v5.1"
    statuses = dict(
        Submission.objects.filter(round__key=key).values_list("submitter__name", "status")
    )
    assert len(statuses) == 19 and set(statuses.values()) == {"published"}
    results = Result.objects.filter(system__round__key=key)
    # v5.1 is imported history: every result is public, as MLCommons published the round. The one result
    # without a score is Dell's empty llama2_70b_lora folder: public with the reason it has none, and its own
    # finding (advisory, for reviewers), which held it back when v5.1 was checked as a live round.
    assert (results.count(), results.filter(score_s__isnull=False).count()) == (185, 184)
    assert results.filter(published=True).count() == 185
    unscored = results.get(score_s__isnull=True)
    assert (unscored.system.submitter.name, unscored.system.key, unscored.benchmark.key) == (
        "Dell",
        "2xXE9685Lx8B200-SXM-180GB",
        "llama2_70b_lora",
    )
    assert unscored.score_message
    assert Finding.objects.filter(
        result=unscored, severity="error", rule="bundle.no-run-log", advisory=True
    ).exists()
    # University of Florida's hpg.dgxb200x8.n8 rgat runs use two learning rates (7 at 0.003, 3 at 0.005). Equal
    # hyperparameters across runs is the portal's own check, not mlperf-logging's: a warning for reviewers, so
    # all 26 of that submission's results are public.
    florida = results.filter(system__submitter__name="University-of-Florida")
    assert (florida.count(), florida.filter(published=True).count()) == (26, 26)
    finding = Finding.objects.get(
        rule="result.hyperparameters-equal",
        severity="warning",
        validation__submission__submitter__name="University-of-Florida",
        message__contains="opt_base_learning_rate",
    )
    assert finding.file.startswith("University-of-Florida/results/hpg.dgxb200x8.n8/rgat/result_")
    assert counts(key) == EXPECTED_COUNTS[key]
    # Public ids: one per public result, all distinct, in MLPerf's form.
    ids = list(results.filter(published=True).values_list("public_id", flat=True))
    assert len(set(ids)) == 185 and all(i.startswith("5.1-") and len(i) == 8 for i in ids)
    rgat = result(key, "Dell", "1xXE9680x8H200-SXM-141GB", "rgat")
    # The factor is the one Dell's scaling.json published; the portal's RCP check computes the same (no
    # result.rcp-scaling warning).
    assert rgat.scaling_factor == pytest.approx(1.003734827264239, rel=1e-6)
    assert rgat.claimed_scaling_factor == pytest.approx(1.003734827264239)
    assert not Finding.objects.filter(result=rgat, rule="result.rcp-scaling").exists()
    assert round(rgat.score_s / 60, 2) == 7.81
    retinanet = result(key, "NVIDIA", "tyche_ngpu72_ngc25.04_pytorch", "retinanet")
    assert round(retinanet.score_s / 60, 2) == 3.77


SPOT_CHECKS = {
    "training-v0.5": spot_check_v05,
    "training-v0.6": spot_check_v06,
    "training-v5.1": spot_check_v51,
}


# --- the test ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("round_key, tarball, ruleset", ROUNDS, ids=[key for key, *_ in ROUNDS])
def test_the_round_as_mlcommons_published_it(
    round_key, tarball, ruleset, published_rounds, worker, tmp_path, client
):
    mlcommons = both_sides(round_key, tarball, ruleset, tmp_path)
    required = {b.key: b.required_runs for b in published_rounds[round_key].benchmarks.all()}
    disagreements = {"runs": run_disagreements(round_key, mlcommons)}
    if ruleset is None:
        print(
            f"{round_key}: mlperf-logging has no ruleset for it: no scores or verdicts to compare"
        )
    else:
        disagreements["scores"] = score_disagreements(round_key, mlcommons, required)
        disagreements["verdicts"] = verdict_disagreements(round_key, mlcommons)
        disagreements["rows"] = row_disagreements(round_key, mlcommons, client)
    for name, wrong in disagreements.items():
        for line in wrong:
            print(f"  {name}: {line}")
    assert {name: wrong[:10] for name, wrong in disagreements.items() if wrong} == {}
    if round_key in SPOT_CHECKS:
        SPOT_CHECKS[round_key]()
