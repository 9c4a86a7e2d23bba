"""mlperf-logging's compliance checker as the rules run it: right config, real line numbers, guarded, cached."""
import builtins
import json
import os
import re

import pytest
import yaml

from submissions.logs.generate import mllog_run
from submissions.rules import baseline, compliance, library
from submissions.rules.library import LinearRe

mlp = pytest.importorskip("mlperf_logging.compliance_checker.mlp_compliance")


@pytest.fixture
def media():
    """Shadow the project-wide autouse fixture that needs Django settings: these tests are pure Python."""


T0 = 1_760_000_000_000
REL = "ACME/results/sys/rgat/result_0.txt"


def mllog(key, value=None, t=0, **metadata):
    record = {"namespace": "", "time_ms": T0 + t, "event_type": "POINT_IN_TIME", "key": key, "value": value,
              "metadata": {"file": "train.py", "lineno": 1, **metadata}}
    return ":::MLLOG " + json.dumps(record)


def generated_rgat_log(seed=1) -> str:
    """A v5.1 R-GAT log from the demo generator, completed with what mlperf-logging's rules ask for."""
    text = mllog_run(benchmark="rgat", org="ACME", division="closed", status="onprem", platform="1xTEST",
                     seed=seed, start_ms=T0, minutes=12, target=0.72, evals=4,
                     hyperparameters={"opt_name": "adam", "opt_base_learning_rate": 0.001, "eval_samples": 788_379,
                                      "global_batch_size": 16384})
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if '"run_start"' in line)
    lines.insert(start + 1, mllog("block_start", None, 1, first_epoch_num=0, epoch_count=1, samples_count=0))
    stop = next(i for i, line in enumerate(lines) if '"run_stop"' in line)
    lines.insert(stop, mllog("block_stop", None, 12 * 60_000, first_epoch_num=0))
    return "\n".join(lines) + "\n"


def write(tmp_path, text, name="result_0.txt"):
    path = tmp_path / name
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


def test_a_generated_v51_log_passes_mlperf_logging(tmp_path):
    path = write(tmp_path, generated_rgat_log())
    assert list(compliance.check_file(path, REL, "5.1.0", "rgat")) == []


def test_the_plain_library_agrees_that_the_generated_log_is_compliant(tmp_path):
    path = write(tmp_path, generated_rgat_log())
    checker = mlp.make_checker("training", "5.1.0", False, False)
    with library.Capture():
        valid, *_ = mlp.main(str(path), "training_5.1.0/common.yaml", checker)
    assert valid


def test_its_messages_point_at_file_lines_not_log_line_indexes(tmp_path):
    lines = generated_rgat_log().splitlines()
    at = next(i for i, line in enumerate(lines) if '"opt_name"' in line)
    lines[at] = lines[at].replace('"adam"', '"sgd"')
    lines[at:at] = ["noise"] * 5  # the library would count only log lines
    found = compliance.check_file(write(tmp_path, "\n".join(lines)), REL, "5.1.0", "rgat")
    [f] = list(found)
    assert (f.severity, f.rule, f.file, f.line) == ("error", "mlperf.compliance", REL, at + 6)
    assert "opt_name" in f.message and "v['value'] == 'adam'" in f.message
    assert "closed_rgat.yaml" in f.hint and "mlperf-logging" in f.hint


def test_the_rules_come_from_the_folders_benchmark_not_from_the_log(tmp_path):
    path = write(tmp_path, generated_rgat_log())
    loglines, errors = compliance.read_loglines(path, "5.1.0", "retinanet", 64 * 1024)
    assert errors == [] and [ll.value["value"] for ll in loglines if ll.key == "submission_benchmark"] == ["retinanet"]
    found = compliance.check_file(path, REL, "5.1.0", "retinanet")
    assert any("opt_weight_decay" in f.message and "closed_retinanet.yaml" in f.hint for f in found)


def test_a_config_outside_mlperf_logging_is_never_loaded(tmp_path):
    """The logged division becomes a YAML path whose code the library executes: '{division}_common.yaml'."""
    marker = tmp_path / "pwned"
    evil = tmp_path / "evil_common.yaml"
    evil.write_text(yaml.safe_dump([{"BEGIN": {"CODE": f"open({str(marker)!r}, 'w').write('x')"}}]))
    ruleset_dir = library.compliance_dir() / "training_5.1.0"
    division = os.path.relpath(tmp_path / "evil", ruleset_dir)
    text = generated_rgat_log().replace('"value": "closed"', json.dumps({"value": division})[1:-1])
    found = compliance.check_file(write(tmp_path, text), REL, "5.1.0", "rgat")
    assert not marker.exists()
    refused = [f for f in found if f.rule == "mlperf.config-missing"]
    assert len(refused) == 1 and refused[0].severity == "warning" and "evil_common.yaml" in refused[0].message
    assert any(f.rule == "mlperf.compliance" and "submission_division" in f.message for f in found)


@pytest.mark.parametrize("name", ["training_5.1.0/closed_rgat.yaml", "training_0.6.0/minigo.yaml"])
def test_its_own_configs_are_accepted(name):
    assert compliance.config_path(name) == library.compliance_dir() / name


@pytest.mark.parametrize("name", ["training_5.1.0/../training_0.7.0/common.yaml", "training_5.1.0/nope.yaml",
                                  "/etc/passwd", "training_5.1.0/closed_../x.yaml", "training_5.1.0/common.yml"])
def test_other_config_names_are_refused(name):
    assert compliance.config_path(name) is None


def test_minigo_v06_starts_from_its_own_config():
    assert compliance.entry_config("0.6.0", "minigo") == "training_0.6.0/minigo.yaml"
    assert compliance.entry_config("0.6.0", "resnet") == "training_0.6.0/common.yaml"
    assert compliance.entry_config("5.1.0", "rgat") == "training_5.1.0/common.yaml"


def test_a_crash_inside_the_library_becomes_a_finding(tmp_path):
    lines = generated_rgat_log().splitlines()
    at = next(i for i, line in enumerate(lines) if '"eval_accuracy"' in line)
    lines[at] = re.sub(r'"value": [0-9.]+', '"value": "high"', lines[at])  # `v['value'] >= 0.72` raises
    found = compliance.check_file(write(tmp_path, "\n".join(lines)), REL, "5.1.0", "rgat")
    assert any(f.severity == "error" and "stopped with TypeError" in f.message for f in found)


def test_lines_the_library_cannot_read_are_errors_at_their_line(tmp_path):
    lines = generated_rgat_log().splitlines()
    lines.insert(3, ':::MLLOG {"key": "seed", "value": 1}')  # no time_ms: a KeyError the library does not catch
    found = compliance.check_file(write(tmp_path, "\n".join(lines)), REL, "5.1.0", "rgat")
    bad = [f for f in found if f.line == 4]
    assert len(bad) == 1 and bad[0].severity == "error" and "cannot read" in bad[0].message


def test_caching_changes_nothing_but_the_time(tmp_path):
    lines = generated_rgat_log().splitlines()
    lines = [line for line in lines if '"eval_samples"' not in line and '"block_stop"' not in line]
    path = write(tmp_path, "\n".join(lines))
    cached = list(compliance.check_file(path, REL, "5.1.0", "rgat"))
    assert cached and cached == list(compliance.check_file(path, REL, "5.1.0", "rgat", cache=False))


def test_the_library_is_left_as_it_was(tmp_path):
    before = (mlp.yaml, mlp.enqueue_config, "eval" in vars(mlp), "exec" in vars(mlp), list(mlp.enqueued_configs))
    compliance.check_file(write(tmp_path, generated_rgat_log()), REL, "5.1.0", "rgat")
    assert (mlp.yaml, mlp.enqueue_config, "eval" in vars(mlp), "exec" in vars(mlp),
            list(mlp.enqueued_configs)) == before
    assert mlp.yaml is yaml


class SoftTimeLimitExceeded(Exception):
    """Stands in for Celery's, which the library's bare `except:` around each rule would swallow."""


def test_a_time_limit_inside_a_rule_is_not_swallowed(tmp_path, monkeypatch):
    real_eval = builtins.eval

    def eval_with_a_deadline(source, *args):
        if getattr(source, "co_filename", "") == "<mlperf-logging rule>":
            raise SoftTimeLimitExceeded()
        return real_eval(source, *args)

    monkeypatch.setattr(builtins, "eval", eval_with_a_deadline)
    with pytest.raises(SoftTimeLimitExceeded):
        compliance.check_file(write(tmp_path, generated_rgat_log()), REL, "5.1.0", "rgat")


@pytest.mark.parametrize("line", [
    "xx :::MLLOG {}",
    ":::MLLOG a :::MLLOG b",
    "no token here",
    "0: " + ":::MLLOG " * 3 + "{...}",
    ":::MLLOG",
])
def test_the_linear_prefix_strip_matches_the_librarys_regex(line):
    token = ":::MLLOG "
    assert LinearRe(token).sub(".*" + token, token, line) == re.sub(".*" + token, token, line)


def test_the_baseline_runs_the_library_on_every_file(tmp_path):
    paths = [(write(tmp_path, generated_rgat_log(seed), f"result_{seed}.txt"), "rgat") for seed in range(3)]
    assert baseline.run_mlperf_checker_sequentially(paths, "5.1.0") == 3
