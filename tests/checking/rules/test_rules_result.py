"""check_result, check_system and rcp_check: the rules about a result's runs together (no Django)."""

import pytest

from submissions.checking.rules import (
    ResultContext,
    RunFacts,
    SystemFacts,
    check_result,
    check_system,
    compare_scaling,
    rcp_check,
)
from submissions.checking.rules import systems as system_rules

from ...mllogs import mllog


@pytest.fixture
def media():
    """Shadow the project-wide autouse fixture that needs Django settings: these tests are pure Python."""


RESULT = "ACME/results/sys/rgat"
SYSTEM_PATH = "ACME/systems/sys.json"


def run(n, *, seed=None, hp=None, division="closed", status="onprem", success=True):
    return RunFacts(
        rel_path=f"{RESULT}/result_{n}.txt",
        success=success,
        seed=n + 1 if seed is None else seed,
        hyperparameters={"global_batch_size": 16384, "opt_base_learning_rate": 0.001}
        if hp is None
        else hp,
        submission={
            "benchmark": "rgat",
            "org": "ACME",
            "division": division,
            "status": status,
            "platform": "x",
        },
    )


def full_system_json():
    """Every field mlperf-logging requires, as text; the counts as counts (a word is a system.number error)."""
    return {name: "x" for name in system_rules.library_required_fields("5.1.0")} | {
        "division": "closed",
        "status": "Available on-premise",
        "number_of_nodes": "1",
        "host_processors_per_node": "2",
        "host_processor_core_count": "64",
        "accelerators_per_node": "8",
    }


def system(description=None, *, fmt="system.json", division="closed", category="onprem"):
    return SystemFacts(
        description=full_system_json() if description is None else description,
        description_format=fmt,
        description_path=SYSTEM_PATH,
        division=division,
        category=category,
    )


def ctx(ruleset="5.1.0", required=10, result_dir=None, benchmark="rgat", blocking=()):
    return ResultContext(
        ruleset=ruleset,
        benchmark=benchmark,
        required_runs=required,
        result_path=RESULT,
        result_dir=result_dir,
        division="closed",
        category="onprem",
        blocking_rules=frozenset(blocking),
    )


def only(findings, rule):
    found = [f for f in findings if f.rule == rule]
    assert len(found) == 1, f"expected one {rule}, got {findings}"
    return found[0]


def test_a_sound_result_has_no_findings():
    assert check_result(ctx(), [run(n) for n in range(10)], system()) == []


def test_too_few_runs():
    f = only(check_result(ctx(), [run(n) for n in range(9)], system()), "result.run-count")
    assert (f.severity, f.file, f.line) == ("error", RESULT, None) and "9 runs" in f.message


def test_too_many_runs():
    assert only(
        check_result(ctx(required=3), [run(n) for n in range(4)], system()), "result.run-count"
    )


def test_runs_with_the_same_seed_are_named():
    runs = [run(n) for n in range(10)]
    runs[7] = run(7, seed=3)  # result_2.txt has seed 3 too
    f = only(check_result(ctx(), runs, system()), "result.seeds-distinct")
    assert f.severity == "error" and f.file == f"{RESULT}/result_7.txt"
    assert "result_2.txt" in f.message and "result_7.txt" in f.message and "'3'" in f.message


def test_reused_seeds_before_v1_are_a_warning():
    runs = [run(n, seed=0) for n in range(5)]
    f = only(
        check_result(ctx("0.6.0", 5), runs, system({"division": "closed", "status": "onprem"})),
        "result.seeds-distinct",
    )
    assert f.severity == "warning"


def test_missing_seeds_are_a_warning():
    runs = [run(n) for n in range(10)]
    runs[4] = run(4, seed="none")
    runs[5] = RunFacts(
        rel_path=f"{RESULT}/result_5.txt",
        hyperparameters=runs[0].hyperparameters,
        submission=runs[0].submission,
    )
    f = only(check_result(ctx(), runs, system()), "result.seeds-distinct")
    assert f.severity == "warning" and "2 of 10" in f.message and "result_4.txt" in f.message


def test_a_hyperparameter_that_differs_names_the_key_and_both_files():
    runs = [run(n) for n in range(10)]
    runs[8] = run(8, hp={"global_batch_size": 16384, "opt_base_learning_rate": 0.005})
    f = only(check_result(ctx(), runs, system()), "result.hyperparameters-equal")
    assert (f.severity, f.file) == ("warning", f"{RESULT}/result_8.txt")
    assert (
        "'opt_base_learning_rate'" in f.message
        and "result_0.txt" in f.message
        and "0.005" in f.message
    )
    assert "does not list it as blocking" in f.hint


def test_hyperparameters_that_differ_block_only_where_the_round_lists_the_rule():
    runs = [run(n) for n in range(10)]
    runs[8] = run(8, hp={"global_batch_size": 16384, "opt_base_learning_rate": 0.005})
    listed = ctx(blocking=["result.hyperparameters-equal"])
    assert (
        only(check_result(listed, runs, system()), "result.hyperparameters-equal").severity
        == "error"
    )
    counters = [run(n, hp={"train_samples": 172032 + n}) for n in range(10)]
    assert (
        only(check_result(listed, counters, system()), "result.hyperparameters-equal").severity
        == "warning"
    )


def test_a_hyperparameter_logged_by_some_runs_only():
    runs = [run(n) for n in range(10)]
    runs[3] = run(3, hp={"global_batch_size": 16384})
    f = only(check_result(ctx(), runs, system()), "result.hyperparameters-equal")
    assert "not logged in result_3.txt" in f.message


def test_counters_logged_as_hyperparameters_differ_with_a_warning():
    runs = [
        run(n, hp={"global_batch_size": 16384, "train_samples": 172032 + 12288 * (n % 3)})
        for n in range(10)
    ]
    assert (
        only(check_result(ctx(), runs, system()), "result.hyperparameters-equal").severity
        == "warning"
    )


def test_equal_numbers_of_either_type_are_equal():
    runs = [run(n, hp={"opt_base_learning_rate": 1 if n % 2 else 1.0}) for n in range(10)]
    assert check_result(ctx(), runs, system()) == []


def test_logs_of_another_division_than_the_system():
    runs = [run(n) for n in range(10)]
    runs[2] = run(2, division="open")
    f = only(check_result(ctx(), runs, system()), "system.division-mismatch")
    assert (f.severity, f.file) == ("error", f"{RESULT}/result_2.txt") and SYSTEM_PATH in f.message


def test_logs_of_another_category_than_the_system():
    runs = [run(n, status="onprem") for n in range(10)]
    f = only(check_result(ctx(), runs, system(category="cloud")), "system.category-mismatch")
    assert f.severity == "warning" and "10 of 10" in f.message


def test_system_json_fields_come_from_mlperf_logging():
    fields = system_rules.library_required_fields("5.1.0")
    assert {"accelerator_model_name", "number_of_nodes", "framework", "cooling"} <= set(fields)
    description = full_system_json()
    del description["cooling"]
    f = only(
        check_result(ctx(), [run(n) for n in range(10)], system(description)),
        "system.required-field",
    )
    assert (f.severity, f.file, f.line) == ("error", SYSTEM_PATH, None) and "'cooling'" in f.message
    assert "mlperf-logging" in f.hint


def test_an_unknown_availability_is_reported_from_mlperf_logging():
    description = full_system_json() | {"status": "available soon"}
    f = only(check_system(system(description), "5.1.0"), "system.invalid-field")
    assert f.severity == "error" and "available soon" in f.message


@pytest.mark.parametrize("status", ["onprem", "cloud", "available"])
def test_a_status_the_round_used_is_a_warning_before_the_rule_that_refuses_it(status):
    """Today's checker refuses v4.0's own status values (its test is `major >= 4`); the rule is 4.1.0's."""
    description = full_system_json() | {"status": status}
    f = only(check_system(system(description), "4.0.0"), "system.invalid-field")
    assert f.severity == "warning" and f"value: {status}," in f.message and "4.1.0" in f.hint
    later = only(check_system(system(description), "4.1.0"), "system.invalid-field")
    assert later.severity == "error"


def test_what_mlperf_logging_logs_stays_out_of_the_workers_log(caplog):
    description = full_system_json()
    del description["cooling"]
    with caplog.at_level("INFO"):
        assert check_system(system(description), "5.1.0")
    assert not [r for r in caplog.records if "mlperf_logging" in r.pathname]


def test_system_findings_can_be_left_to_a_check_per_system():
    description = full_system_json()
    del description["cooling"]
    findings = check_result(
        ctx(), [run(n) for n in range(10)], system(description), include_system=False
    )
    assert findings == []


def test_entry_json_needs_the_v05_fields():
    description = {
        "division": "closed",
        "status": "on-premise",
        "hardware": "x",
        "framework": "x",
        "interconnect": "x",
        "os": "x",
        "libraries": "x",
        "compilers": "x",
        "power": "x",
        "notes": "x",
        "nodes": [
            {
                "num_nodes": 1,
                "cpu": "x",
                "num_cores": 1,
                "num_vcpus": 1,
                "accelerator": "x",
                "num_accelerators": 8,
                "sys_mem_size": "x",
                "sys_storage_type": "x",
                "sys_storage_size": "x",
                "cpu_accel_interconnect": "x",
                "network_card": "x",
                "num_network_cards": 1,
                "notes": "",
            }
        ],
    }
    entry = SystemFacts(
        description=description,
        description_format="entry.json",
        description_path="acme/entry/results/sys/entry.json",
        division="closed",
        category="onprem",
    )
    assert check_system(entry, "0.5.0") == []
    del description["framework"]
    del description["nodes"][0]["cpu"]
    findings = check_system(entry, "0.5.0")
    assert {f.message for f in findings if f.rule == "system.required-field"} == {
        "The system description has no 'framework' field.",
        "The system description has no 'cpu' field in node group 1 of 'nodes'.",
    }


def test_v06_system_json_needs_division_and_status():
    assert check_system(system({"division": "closed", "status": "onprem"}), "0.6.0") == []
    f = only(check_system(system({"status": "onprem"}), "0.6.0"), "system.required-field")
    assert "'division'" in f.message


# --- RCP ------------------------------------------------------------------------------------------------------


def rgat_result(folder, epochs, batch_size=16384):
    """Ten R-GAT logs that converge at the given epoch (mlperf-logging's RCPs for BS 16384 say ~0.86)."""
    folder.mkdir(parents=True, exist_ok=True)
    for n in range(10):
        (folder / f"result_{n}.txt").write_text(
            "\n".join(
                [
                    mllog("submission_benchmark", "rgat"),
                    mllog("global_batch_size", batch_size),
                    mllog("run_start", None, 10),
                    mllog("eval_accuracy", 0.725, 100, epoch_num=epochs),
                    mllog("run_stop", None, 101, status="success", epoch_num=epochs),
                ]
            )
            + "\n"
        )
    return folder


def test_runs_converging_like_the_reference_pass_the_rcp_check(tmp_path):
    findings, factor = rcp_check(
        rgat_result(tmp_path / "rgat", 0.9), "5.1.0", "rgat", result_path=RESULT
    )
    f = only(findings, "result.rcp")
    assert f.severity == "info" and "passed" in f.message and f.file == RESULT
    assert factor == 1.0


def test_runs_converging_a_little_faster_are_normalised(tmp_path):
    folder = rgat_result(tmp_path / "rgat", 0.84)
    findings, factor = rcp_check(folder, "5.1.0", "rgat", result_path=RESULT)
    assert factor > 1.0 and f"{factor:.6g}" in only(findings, "result.rcp").message
    assert [f.rule for f in findings] == [
        "result.rcp"
    ]  # scaling.json is compared by finalize, as ingest read it
    assert (
        only(compare_scaling(None, factor, RESULT), "result.rcp-scaling").severity == "warning"
    )  # none claimed
    assert compare_scaling(factor, factor, RESULT) == []


def test_runs_converging_much_faster_fail_the_rcp_check(tmp_path):
    findings, factor = rcp_check(
        rgat_result(tmp_path / "rgat", 0.3), "5.1.0", "rgat", result_path=RESULT
    )
    f = only(findings, "result.rcp")
    assert f.severity == "error" and "failed" in f.message and factor is None


def test_a_batch_size_above_every_rcp_needs_one(tmp_path):
    findings, factor = rcp_check(
        rgat_result(tmp_path / "rgat", 5.0, batch_size=10**7), "5.1.0", "rgat"
    )
    assert only(findings, "result.rcp").severity == "error" and factor is None


def test_the_rcp_check_never_writes_into_the_result_folder(tmp_path):
    folder = rgat_result(tmp_path / "rgat", 0.84)
    before = sorted(p.name for p in folder.iterdir())
    rcp_check(folder, "5.1.0", "rgat")
    assert sorted(p.name for p in folder.iterdir()) == before


def test_the_rcp_check_takes_the_benchmark_from_the_round_not_the_logs(tmp_path):
    folder = rgat_result(tmp_path / "rgat", 0.9)
    for path in folder.glob("result_*.txt"):
        path.write_text(path.read_text().replace('"rgat"', '"../../x"'))
    findings, factor = rcp_check(folder, "5.1.0", "rgat")
    assert only(findings, "result.rcp").severity == "info" and factor == 1.0


def test_rcp_applies_from_v1_in_the_closed_division(tmp_path):
    folder = rgat_result(tmp_path / "rgat", 0.9)
    assert rcp_check(folder, "0.6.0", "resnet") == ([], None)
    assert rcp_check(folder, "5.1.0", "minigo") == ([], None)
    findings, factor = rcp_check(folder, "5.1.0", "no_such_benchmark")
    assert only(findings, "result.rcp").severity == "warning" and factor is None
    findings = check_result(ctx(result_dir=folder), [run(n) for n in range(10)], system())
    assert [f.rule for f in findings] == ["result.rcp"]
    open_system = system(division="open")
    assert (
        check_result(
            ctx(result_dir=folder), [run(n, division="open") for n in range(10)], open_system
        )
        == []
    )


def test_a_result_whose_logs_cannot_be_read_fails_the_rcp_check(tmp_path):
    folder = rgat_result(tmp_path / "rgat", 0.9)
    (folder / "result_3.txt").write_text(':::MLLOG {"key": "global_batch_size", \n')
    findings, factor = rcp_check(folder, "5.1.0", "rgat")
    f = only(findings, "result.rcp")
    assert f.severity == "error" and "result_3.txt" in f.message and factor is None


def test_a_run_that_stops_with_success_but_never_evaluates_fails_the_rcp_check_cleanly(tmp_path):
    folder = rgat_result(tmp_path / "rgat", 0.9)
    (folder / "result_5.txt").write_text(
        "\n".join(
            [
                mllog("global_batch_size", 16384),
                mllog("run_start", None, 10),
                mllog("run_stop", None, 11, status="success"),
            ]
        )
        + "\n"
    )
    findings, factor = rcp_check(folder, "5.1.0", "rgat")
    f = only(findings, "result.rcp")
    assert f.severity == "error" and "result_5.txt" in f.message and factor is None


RCP_QUIRKS = {
    "plain": lambda line: line,
    "prefixed": lambda line: "0: " + line,
    "two records on one line, split at CR": lambda line: line + "\r" + line.replace("0.725", "0.7"),
    "noise after a CR": lambda line: line + "\rprogress 50%",
    "not ASCII (read from the file)": lambda line: line.replace('"rgat"', '"rgät"'),
    "cut short": lambda line: line[:-10],
}


@pytest.mark.parametrize("quirk", RCP_QUIRKS)
def test_the_rcp_reading_from_parsed_lines_is_the_librarys_reading_of_the_file(tmp_path, quirk):
    from submissions.checking.logs import parse_file
    from submissions.checking.rules.mlperf import rcp

    folder = rgat_result(tmp_path / "rgat", 0.9)
    path = folder / "result_0.txt"
    lines = path.read_text().splitlines()
    lines = [RCP_QUIRKS[quirk](line) for line in lines]
    path.write_bytes(("\n".join(lines) + "\nnoise without a token\n").encode())
    kept = []
    parse_file(path, max_line_bytes=64 * 1024, mllog_lines=kept)
    reading = rcp.read_run(path, "5.1.0", mllog_lines=kept)
    assert reading == rcp.read_run(path, "5.1.0")
    assert set(reading) in ({"not_converged", "epochs", "batch_size"}, {"error"})


def test_the_rcp_check_uses_the_readings_it_is_given_and_reads_the_rest(tmp_path):
    from submissions.checking.rules.mlperf import rcp

    folder = rgat_result(tmp_path / "rgat", 0.9)
    readings = {
        f"result_{n}.txt": rcp.read_run(folder / f"result_{n}.txt", "5.1.0") for n in range(9)
    }
    assert rcp_check(folder, "5.1.0", "rgat", readings=readings) == rcp_check(
        folder, "5.1.0", "rgat"
    )
    readings["result_3.txt"] = {
        "not_converged": 1,
        "epochs": 1e9,
        "batch_size": 16384,
    }  # not the file's
    readings["result_4.txt"] = {"not_converged": 1, "epochs": 1e9, "batch_size": 16384}
    findings, factor = rcp_check(folder, "5.1.0", "rgat", readings=readings)
    assert (
        factor is None and "2 of 10 runs did not converge" in only(findings, "result.rcp").message
    )
    readings["result_5.txt"] = {"unreadable": True}
    findings, _ = rcp_check(folder, "5.1.0", "rgat", readings=readings)
    assert "result_5.txt has binary data" in only(findings, "result.rcp").message


def test_a_fault_inside_the_result_checks_is_a_finding_not_the_end_of_finalize(
    tmp_path, monkeypatch
):
    from submissions.checking.rules import result
    from submissions.checking.rules.mlperf import rcp

    def broken(*args, **kwargs):
        raise KeyError("a fault in the portal")

    monkeypatch.setattr(result, "_check_seeds", broken)
    monkeypatch.setattr(rcp, "rcp_check", broken)
    findings = check_result(
        ctx(result_dir=rgat_result(tmp_path / "rgat", 0.84)), [run(n) for n in range(10)], system()
    )
    crashed = [f for f in findings if f.rule == "result.check-crashed"]
    assert [f.severity for f in crashed] == ["error", "error"]
    assert "KeyError" in crashed[0].message and crashed[0].file == RESULT


def test_history_scores_with_the_factor_mlcommons_published_and_shows_the_portals_beside_it():
    from submissions.checking.rules.mlperf.rcp import score_factor

    where = "Acme/results/alpha/bert"
    # scaling.json published 1.0104; the portal's RCP check computes no normalisation (1.0).
    factor, found = score_factor(0.9, 1.0104, where, history=True)
    assert factor == 1.0104
    assert [(f.severity, f.rule) for f in found] == [("warning", "result.rcp-scaling")]
    assert "1.0104" in found[0].message and "computes 1." in found[0].message
    assert found[0].file == f"{where}/scaling.json"
    # No scaling.json: MLCommons published the score unscaled, whatever the portal computes today.
    factor, found = score_factor(1.05, None, where, history=True)
    assert factor == 1.0 and "unscaled" in found[0].message and "1.05" in found[0].message
    # Today's library has no RCP for it (or its check failed): the published factor stays, with no warning.
    assert score_factor(None, 1.12, where, history=True) == (1.12, [])
    assert score_factor(1.12, 1.12, where, history=True) == (1.12, [])
    # A live round computes its own; a bundle's scaling.json never sets its score there.
    factor, found = score_factor(1.05, 1.12, where, history=False)
    assert factor == 1.05 and [f.rule for f in found] == ["result.rcp-scaling"]
    assert score_factor(None, 1.12, where, history=False)[0] == 1.0
    # A ruleset that does not scale by RCP (v1.0): × 1 in a live round.
    assert score_factor(1.05, None, where, history=False, normalised=False) == (1.0, [])
