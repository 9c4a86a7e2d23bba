"""The round's rules, of the round's time (issue 25): real published logs that MLCommons' tools accepted keep
their runs; a run that mlperf-logging's checker of its ruleset fails is a failed run, as the result summarizer
drops it.

The logs come from the shared MLPerf rounds (skips without them); mlperf-logging's own checker, run here on the
same file, gives each verdict the portal is compared with. The same comparison over every run of every shared
round, ingested by a real worker, is tests/checking/test_shared_rounds.py's.
"""

import logging
import tarfile

import pytest
from mlperf_logging.compliance_checker import mlp_parser

from leaderboard.catalogue import rule_catalogue
from leaderboard.catalogue.rounds import ROUNDS_DIR, read_round_file
from submissions.checking.rules import RunContext, check_run
from submissions.checking.rules.mlperf import compliance
from submissions.checking.rules.mlperf.library import mlp_compliance

from ...conftest import shared_plain_tar

pytestmark = pytest.mark.shared_rounds

CLOCK_ERRORS = set(rule_catalogue.UNTIMED_RULES)


@pytest.fixture
def media():
    """Shadow the project-wide autouse fixture that needs Django settings: these tests are pure Python."""


def round_context(key: str):
    """(ruleset, {folder name: RunContext}) from the round's file."""
    data = read_round_file(ROUNDS_DIR / f"{key}.toml")
    keys = frozenset(b["key"] for b in data["benchmarks"])
    contexts = {}
    for bench in data["benchmarks"]:
        ctx = RunContext(
            data["ruleset"],
            bench["key"],
            keys,
            quality_target=bench.get("quality_target"),
            higher_is_better=bench.get("higher_is_better", True),
            require_init_stop_before_run_start=data.get(
                "require_init_stop_before_run_start", False
            ),
        )
        for name in [bench["key"], *bench.get("aliases", [])]:
            contexts[name] = ctx
    return data["ruleset"], contexts


def result_logs(tarball: str, wanted=None):
    """(bundle-relative path, bytes) of every result log of a shared round, or of the paths in `wanted`."""
    with tarfile.open(shared_plain_tar(tarball), "r:") as tar:
        for member in tar:
            parts = member.name.removeprefix("./").split("/")
            if not member.isfile() or len(parts) < 4 or not parts[-1].startswith("result_"):
                continue
            if "results" not in parts[-4:-2] or not parts[-1].endswith(".txt"):
                continue  # power logs (power/result_N/node_N.txt) and stray files
            rel = "/".join(parts)
            if wanted is None or rel in wanted:
                yield rel, tar.extractfile(member).read()


def library_passes(path, ruleset: str, config: str = "common.yaml") -> bool:
    """mlperf-logging's own verdict on the log, as its package_checker and result summarizer ask for it (0.6.0's
    MiniGo rules are not reached from common.yaml: they are their own config)."""
    checker = mlp_compliance.make_checker(
        usage="training", ruleset=ruleset, quiet=True, werror=False
    )
    previous = logging.root.manager.disable
    logging.disable(logging.CRITICAL)  # the library logs every rule it applies
    try:
        return mlp_compliance.main(str(path), f"training_{ruleset}/{config}", checker)[0]
    finally:
        logging.disable(previous)


def checked(tmp_path, round_key: str, rel: str, data: bytes):
    ruleset, contexts = round_context(round_key)
    path = tmp_path / "result_0.txt"
    path.write_bytes(data)
    return path, check_run(path, rel, contexts[rel.split("/")[-2]])


# --- real logs that go on after run_stop ----------------------------------------------------------------------

GO_ON = {
    # MiniGo evaluates every model once training ends, then logs run_stop with the time the winning model was
    # trained: epoch records written before run_stop are timed after it, every eval after it.
    "Dell/results/DSS8440x8A100-PCIE-40GB/minigo/result_0.txt": (
        "training-v1.0",
        "training_v1.0_results.tar.xz",
        {"run.clock-backwards", "run.record-after-stop"},
    ),
    # Habana writes its block records late: two blocks after the one that reached the target, before run_stop.
    "Habana/results/SYS-420GH-TNGR/bert/result_0.txt": (
        "training-v1.0",
        "training_v1.0_results.tar.xz",
        {"run.clock-backwards"},
    ),
    # Stable Diffusion logs run_stop at the checkpoint that reached the target, then evaluates it.
    "Fujitsu/results/GX2560M7_H100_SXM_80GBx4/stable_diffusion/result_0.txt": (
        "training-v4.0",
        "training_v4.0_results.tar.xz",
        {"run.clock-backwards", "run.record-after-stop"},
    ),
}


@pytest.mark.parametrize("rel", sorted(GO_ON))
def test_a_real_log_that_goes_on_after_run_stop_keeps_its_time(tmp_path, rel):
    round_key, tarball, warned = GO_ON[rel]
    [(_, data)] = list(result_logs(tarball, {rel}))
    path, outcome = checked(tmp_path, round_key, rel, data)
    ruleset = round_context(round_key)[0]
    assert library_passes(
        path, ruleset
    )  # the premise: MLCommons' checker of the ruleset accepts it
    clock_findings = {f.rule: f for f in outcome.findings if f.rule in CLOCK_ERRORS}
    assert set(clock_findings) == warned
    for f in clock_findings.values():
        assert f.severity == "warning" and f.line is not None
        assert "the time to train stands" in f.message and "reviewers" in f.hint
    s = outcome.summary
    assert s.success and s.time_to_train_s == pytest.approx(s.run_stop - s.run_start)


def test_a_v06_minigo_log_is_timed_by_its_eval_result(tmp_path):
    """NVIDIA's v0.6 MiniGo logs have no run_stop: eval_result gives the seconds from run_start to the save_model
    of the model that reached the target, which mlperf-logging's training_0.6.0/minigo.yaml checks. That is
    the run's time to train, not a failed run."""
    rel = "NVIDIA/results/dgx1_ngc19.05_tensorflow/minigo/result_4.txt"
    [(_, data)] = list(result_logs("training_v0.6_results.tar.xz", {rel}))
    path, outcome = checked(tmp_path, "training-v0.6", rel, data)
    assert library_passes(path, "0.6.0", "minigo.yaml")
    loglines, _ = mlp_parser.parse_file(str(path), ruleset="0.6.0")
    assert not any(ll.key == "run_stop" for ll in loglines)
    [seconds] = [ll.value["metadata"]["timestamp"] for ll in loglines if ll.key == "eval_result"]
    s = outcome.summary
    assert s.success and s.time_to_train_s == pytest.approx(seconds, abs=1e-3)
    assert {f.severity for f in outcome.findings if f.rule in CLOCK_ERRORS} == {"warning"}
    assert "run.no-run-stop" not in {f.rule for f in outcome.findings}


# --- the checker's verdict of the ruleset ------------------------------------------------------------------------


def test_a_run_that_mlperf_loggings_checker_fails_is_a_failed_run(tmp_path):
    """Supermicro's v1.0 Mask R-CNN run 2 logs a learning rate the 1.0.0 rules refuse; the result summarizer
    drops it, so the portal does not count it either."""
    rel = "Supermicro/results/as-4142gs-tnr/maskrcnn/result_2.txt"
    [(_, data)] = list(result_logs("training_v1.0_results.tar.xz", {rel}))
    path, outcome = checked(tmp_path, "training-v1.0", rel, data)
    assert not library_passes(path, "1.0.0")
    [f] = [f for f in outcome.findings if f.rule == "mlperf.compliance"]
    assert f.severity == "error" and "opt_base_learning_rate" in f.message
    assert not outcome.summary.success
    assert outcome.summary.failure_reason.startswith("mlperf-logging's checker fails the log")
    assert "opt_base_learning_rate" in outcome.summary.failure_reason


def test_todays_rules_for_060_are_not_the_verdict_of_the_round(tmp_path):
    """Google's published v0.6 logs fail today's training_0.6.0 rules (no submission_poc_name, no epoch
    records): that round's own tools accepted them, so the checker's errors are warnings and the run stands."""
    rel = "Google/results/tpu-v3-32/transformer/result_0.txt"
    [(_, data)] = list(result_logs("training_v0.6_results.tar.xz", {rel}))
    path, outcome = checked(tmp_path, "training-v0.6", rel, data)
    assert not library_passes(path, "0.6.0")
    found = [f for f in outcome.findings if f.rule == "mlperf.compliance"]
    assert found and {f.severity for f in found} == {"warning"}
    assert all(compliance.NOT_OF_ITS_TIME.strip() in f.hint for f in found)
    assert outcome.summary.success
