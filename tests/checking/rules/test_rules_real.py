"""The rules on a few real published logs, extracted from the shared MLPerf tarballs (skips without them)."""

import json
import tarfile

import pytest

from bench import baseline
from submissions.checking.logs import parse_file
from submissions.checking.rules import (
    ResultContext,
    RunContext,
    RunFacts,
    SystemFacts,
    check_result,
    check_run,
    rcp_check,
)
from submissions.checking.systems import fields_of

from ...conftest import shared_plain_tar

pytestmark = pytest.mark.shared_rounds


@pytest.fixture
def media():
    """Shadow the project-wide autouse fixture that needs Django settings: these tests are pure Python."""


V51_KEYS = frozenset(
    {"llama31_405b", "llama31_8b", "llama2_70b_lora", "flux1", "dlrm_dcnv2", "rgat", "retinanet"}
)
V06_KEYS = frozenset({"resnet", "ssd", "maskrcnn", "gnmt", "transformer", "ncf", "minigo"})
WANTED = {
    "training_v5.1_results.tar.xz": [
        "./Dell/systems/1xXE9680x8H200-SXM-141GB.json",
        "./Dell/results/1xXE9680x8H200-SXM-141GB/rgat/",
        "./Dell/results/1xXE9680Lx8H200-SXM-141GB/rgat/result_7.txt",
    ],
    "training_v0.6_results.tar.xz": [
        "./NVIDIA/results/dgx1_ngc19.05_pytorch/maskrcnn/result_0.txt",
        "./Intel/results/clx-8260l-2s-x32/minigo/result_0.txt",
        "./Google/results/tpu-v3-32/mask/result_0.txt",
    ],
    "training_v0.5_results.tar.xz": [
        "v0.5.0/nvidia/submission/results/dgx1_ngc18.11_mxnet/",
    ],
}


def extract(tarball, prefixes, dest):
    """Copy the members under `prefixes` out of the round's plain tar (stops once past them)."""
    pending = set(prefixes)
    with tarfile.open(tarball, "r:") as tar:
        for member in tar:
            hit = next((p for p in prefixes if member.name.startswith(p)), None)
            if hit is None:
                if not pending and member.isfile():
                    break
                continue
            pending.discard(hit)
            if member.isfile():
                target = dest / member.name.removeprefix("./")
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(tar.extractfile(member).read())


@pytest.fixture(scope="module")
def real(tmp_path_factory):
    roots = {}
    for name, prefixes in WANTED.items():
        tarball = shared_plain_tar(name)
        dest = tmp_path_factory.mktemp(name.split("_")[1])
        extract(tarball, prefixes, dest)
        roots[name.split("_")[1]] = dest
    return roots


def test_a_real_v51_result_passes_every_rule(real):
    folder = real["v5.1"] / "Dell/results/1xXE9680x8H200-SXM-141GB/rgat"
    ctx = RunContext("5.1.0", "rgat", V51_KEYS, quality_target=0.72)
    runs = []
    for path in sorted(folder.glob("result_*.txt")):
        rel = f"Dell/results/1xXE9680x8H200-SXM-141GB/rgat/{path.name}"
        outcome = check_run(path, rel, ctx)
        assert outcome.findings == [] and outcome.summary.success, rel
        s = outcome.summary
        runs.append(RunFacts(rel, s.success, s.seed, s.hyperparameters, s.submission))
    assert len(runs) == 10
    description = json.loads(
        (real["v5.1"] / "Dell/systems/1xXE9680x8H200-SXM-141GB.json").read_text()
    )
    fields = fields_of(description, "system.json")
    system = SystemFacts(
        description,
        "system.json",
        "Dell/systems/1xXE9680x8H200-SXM-141GB.json",
        fields["division"],
        fields["category"],
    )
    result = ResultContext(
        "5.1.0",
        "rgat",
        10,
        "Dell/results/1xXE9680x8H200-SXM-141GB/rgat",
        folder,
        fields["division"],
        fields["category"],
    )
    findings = check_result(result, runs, system)
    assert [(f.severity, f.rule) for f in findings] == [("info", "result.rcp")]
    _, factor = rcp_check(folder, "5.1.0", "rgat")
    assert factor == pytest.approx(
        json.loads((folder / "scaling.json").read_text())["scaling_factor"], rel=1e-6
    )


def test_the_plain_library_checks_the_same_real_files(real):
    folder = real["v5.1"] / "Dell/results/1xXE9680x8H200-SXM-141GB/rgat"
    files = [(p, "rgat") for p in sorted(folder.glob("result_*.txt"))]
    assert baseline.run_mlperf_checker_sequentially(files, "5.1.0") == 10


def test_a_real_v51_run_cut_short(real):
    path = real["v5.1"] / "Dell/results/1xXE9680Lx8H200-SXM-141GB/rgat/result_7.txt"
    outcome = check_run(path, "r7", RunContext("5.1.0", "rgat", V51_KEYS, quality_target=0.72))
    [f] = [f for f in outcome.findings if f.rule == "run.no-run-stop"]
    assert f.line == parse_file(path).line_count
    assert any(
        f.rule == "mlperf.compliance" and "'run_stop'" in f.message for f in outcome.findings
    )


def test_real_v06_mask_logs_name_a_key_outside_the_round(real):
    path = real["v0.6"] / "Google/results/tpu-v3-32/mask/result_0.txt"
    ctx = RunContext(
        "0.6.0", "maskrcnn", V06_KEYS, quality_target=0.377, require_init_stop_before_run_start=True
    )
    outcome = check_run(path, "m0", ctx)
    [f] = [f for f in outcome.findings if f.rule == "run.benchmark-key"]
    assert "'mask'" in f.message and f.line is not None
    assert not any(f.rule == "mlperf.compliance" for f in outcome.findings)


def test_a_real_v06_log_with_progress_bars_is_still_checked(real):
    path = real["v0.6"] / "NVIDIA/results/dgx1_ngc19.05_pytorch/maskrcnn/result_0.txt"
    ctx = RunContext(
        "0.6.0", "maskrcnn", V06_KEYS, quality_target=0.377, require_init_stop_before_run_start=True
    )
    outcome = check_run(path, "n0", ctx)
    assert {f.severity for f in outcome.findings} <= {"warning", "info"}
    assert {f.rule for f in outcome.findings if f.severity == "warning"} == {"run.line-too-long"}
    assert outcome.summary.success


def test_real_v06_minigo_is_checked_with_its_own_rules(real):
    path = real["v0.6"] / "Intel/results/clx-8260l-2s-x32/minigo/result_0.txt"
    ctx = RunContext(
        "0.6.0", "minigo", V06_KEYS, quality_target=0.5, require_init_stop_before_run_start=True
    )
    findings = [f for f in check_run(path, "i0", ctx).findings if f.rule == "mlperf.compliance"]
    assert any("minigo.yaml" in f.hint for f in findings)
    assert all(f.line is not None for f in findings if "cannot read" in f.message)


def test_a_real_v05_result_passes(real):
    folder = real["v0.5"] / "v0.5.0/nvidia/submission/results/dgx1_ngc18.11_mxnet"
    ctx = RunContext("0.5.0", "resnet", V06_KEYS, quality_target=0.749)
    runs = []
    for path in sorted((folder / "resnet").glob("result_*.txt")):
        outcome = check_run(path, path.name, ctx)
        assert not [f for f in outcome.findings if f.severity == "error"], path.name
        s = outcome.summary
        runs.append(RunFacts(path.name, s.success, s.seed, s.hyperparameters, s.submission))
    description = json.loads((folder / "entry.json").read_text())
    fields = fields_of(description, "entry.json")
    system = SystemFacts(
        description, "entry.json", "entry.json", fields["division"], fields["category"]
    )
    result = ResultContext(
        "0.5.0", "resnet", 5, "resnet", folder / "resnet", fields["division"], fields["category"]
    )
    assert not [f for f in check_result(result, runs, system) if f.severity == "error"]
