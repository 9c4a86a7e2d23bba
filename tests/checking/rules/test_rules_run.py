"""check_run: one finding per way a run log can be wrong, with its rule id, file and line (no Django)."""

import json

import pytest

from submissions.checking.rules import RunContext, check_run
from submissions.checking.rules.mlperf import rcp

from ...mllogs import REL, V51_KEYS, mllog


@pytest.fixture
def media():
    """Shadow the project-wide autouse fixture that needs Django settings: these tests are pure Python."""


V06_KEYS = frozenset({"resnet", "ssd", "maskrcnn", "gnmt", "transformer", "ncf", "minigo"})
RGAT = RunContext(ruleset="5.1.0", benchmark="rgat", benchmark_keys=V51_KEYS, quality_target=0.72)


def rgat_lines(*, benchmark="rgat", last_accuracy=0.725, status="success"):
    """A v5.1 R-GAT run that passes mlperf-logging's checker (line numbers below count from 1)."""
    return [
        mllog("cache_clear", True, 0),  # 1
        mllog("init_start", None, 1),  # 2
        mllog("submission_benchmark", benchmark, 2),  # 3
        mllog("submission_org", "ACME", 2),  # 4
        mllog("submission_division", "closed", 2),  # 5
        mllog("submission_status", "onprem", 2),  # 6
        mllog("submission_platform", "1xTEST", 2),  # 7
        mllog("seed", 7, 3),  # 8
        mllog("global_batch_size", 16384, 3),  # 9
        mllog("gradient_accumulation_steps", 1, 3),  # 10
        mllog("opt_name", "adam", 3),  # 11
        mllog("opt_base_learning_rate", 0.001, 3),  # 12
        mllog("train_samples", 157_000_000, 3),  # 13
        mllog("eval_samples", 788_379, 3),  # 14
        "Initialisation finished",  # 15
        mllog("init_stop", None, 60_000),  # 16
        mllog("run_start", None, 60_001),  # 17
        mllog("block_start", None, 60_002, first_epoch_num=0, epoch_count=1, samples_count=0),  # 18
        mllog("eval_start", None, 600_000, epoch_num=0.45),  # 19
        mllog("eval_accuracy", 0.70, 600_100, epoch_num=0.45),  # 20
        mllog("eval_stop", None, 600_200, epoch_num=0.45),  # 21
        mllog("eval_start", None, 1_200_000, epoch_num=0.9),  # 22
        mllog("eval_accuracy", last_accuracy, 1_200_100, epoch_num=0.9),  # 23
        mllog("eval_stop", None, 1_200_200, epoch_num=0.9),  # 24
        mllog("block_stop", None, 1_200_300, first_epoch_num=0),  # 25
        mllog("run_stop", None, 1_200_400, status=status, epoch_num=0.9),  # 26
    ]


def write(tmp_path, lines, name="result_0.txt"):
    path = tmp_path / name
    data = lines if isinstance(lines, bytes) else ("\n".join(lines) + "\n").encode()
    path.write_bytes(data)
    return path


def check(tmp_path, lines, ctx=RGAT):
    return check_run(write(tmp_path, lines), REL, ctx)


def only(findings, rule):
    found = [f for f in findings if f.rule == rule]
    assert len(found) == 1, f"expected one {rule}, got {findings}"
    return found[0]


def rules(findings, severity="error"):
    return {f.rule for f in findings if f.severity == severity}


# --- a good run ---------------------------------------------------------------------------------------------


def test_a_compliant_run_has_no_findings(tmp_path):
    outcome = check(tmp_path, rgat_lines())
    assert outcome.findings == []
    s = outcome.summary
    assert s.success and s.time_to_train_s == pytest.approx(1140.399)
    assert s.submission["benchmark"] == "rgat" and s.seed == 7


def test_findings_are_plain_data(tmp_path):
    outcome = check(tmp_path, rgat_lines(status="aborted"))
    d = only(outcome.findings, "run.not-successful").as_dict()
    assert d == {
        "severity": "error",
        "rule": "run.not-successful",
        "message": d["message"],
        "hint": d["hint"],
        "file": REL,
        "line": 26,
    }
    assert json.loads(json.dumps(d)) == d


# --- the ways a run fails -----------------------------------------------------------------------------------


def test_it_reports_a_missing_run_start(tmp_path):
    lines = rgat_lines()
    del lines[16]
    f = only(check(tmp_path, lines).findings, "run.no-run-start")
    assert (f.severity, f.file, f.line) == ("error", REL, None)


def test_it_reports_a_missing_run_stop_at_the_last_line(tmp_path):
    outcome = check(tmp_path, rgat_lines()[:-1] + ["Traceback (most recent call last):", "  OOM"])
    f = only(outcome.findings, "run.no-run-stop")
    assert (f.severity, f.file, f.line) == ("error", REL, 27)
    assert not outcome.summary.success


def test_it_reports_an_unsuccessful_run_at_its_run_stop_line(tmp_path):
    outcome = check(tmp_path, rgat_lines(status="aborted"))
    f = only(outcome.findings, "run.not-successful")
    assert (f.severity, f.line) == ("error", 26) and "'aborted'" in f.message
    assert "run.quality-target" not in rules(outcome.findings)  # said once, not twice
    assert not outcome.summary.success


def test_it_reports_run_stop_logged_before_run_start(tmp_path):
    lines = rgat_lines()
    lines[16] = mllog("run_start", None, 1_300_000)
    f = only(check(tmp_path, lines).findings, "run.stop-before-start")
    assert (f.severity, f.line) == ("error", 26)


def test_it_reports_a_last_eval_short_of_the_quality_target(tmp_path):
    outcome = check(tmp_path, rgat_lines(last_accuracy=0.71))
    f = only(outcome.findings, "run.quality-target")
    assert (f.severity, f.file, f.line) == ("error", REL, 23)
    assert not outcome.summary.success and "0.71" in outcome.summary.failure_reason


def test_lower_is_better_targets_are_judged_the_other_way(tmp_path):
    ctx = RunContext("5.1.0", "rgat", V51_KEYS, quality_target=0.72, higher_is_better=False)
    f = only(check(tmp_path, rgat_lines(last_accuracy=0.725), ctx).findings, "run.quality-target")
    assert f.line == 23 and "lower is better" in f.message


def test_a_float32_rounding_of_the_target_reaches_it(tmp_path):
    ctx = RunContext("5.1.0", "rgat", V51_KEYS, quality_target=21.8)
    outcome = check(tmp_path, rgat_lines(last_accuracy=21.799999237060547), ctx)
    assert "run.quality-target" not in rules(outcome.findings)


def mll(t, key, value=None, **metadata):
    return f":::MLL {t:.3f} {key}: " + json.dumps(
        {"value": value, "metadata": {"file": "x.py", "lineno": 1, **metadata}}
    )


def v06_lines(init_stop_at=100.0):
    return [
        mll(90.0, "init_start"),  # 1
        mll(init_stop_at, "init_stop"),  # 2
        mll(101.0, "run_start"),  # 3
        mll(200.0, "eval_accuracy", 0.76, epoch_num=1),  # 4
        mll(201.0, "run_stop", status="success"),  # 5
    ]


V06 = RunContext(
    "0.6.0", "resnet", V06_KEYS, quality_target=0.759, require_init_stop_before_run_start=True
)


def test_it_reports_a_missing_init_stop_when_the_round_requires_one(tmp_path):
    lines = v06_lines()
    del lines[1]
    f = only(check(tmp_path, lines, V06).findings, "run.no-init-stop")
    assert (f.severity, f.line) == ("error", 2)  # the run_start line


def test_it_reports_run_start_before_init_stop_when_the_round_requires_the_order(tmp_path):
    outcome = check(tmp_path, v06_lines(init_stop_at=150.0), V06)
    f = only(outcome.findings, "run.init-order")
    assert (f.severity, f.line) == ("error", 3)
    assert not outcome.summary.success


def test_init_order_is_not_checked_when_the_round_does_not_ask(tmp_path):
    ctx = RunContext("0.6.0", "resnet", V06_KEYS, quality_target=0.759)
    assert not {"run.init-order", "run.no-init-stop"} & rules(
        check(tmp_path, v06_lines(150.0), ctx).findings
    )


# --- the benchmark key the log names ------------------------------------------------------------------------


@pytest.mark.parametrize("logged", ["mask", "../training_0.7.0/common", "RGAT"])
def test_a_benchmark_outside_the_round_is_an_error_and_the_checker_is_not_run(tmp_path, logged):
    outcome = check(tmp_path, rgat_lines(benchmark=logged))
    f = only(outcome.findings, "run.benchmark-key")
    assert (f.severity, f.file, f.line) == ("error", REL, 3) and repr(logged) in f.message
    assert "mlperf.compliance" not in {x.rule for x in outcome.findings}
    assert only(outcome.findings, "mlperf.skipped").severity == "info"


def test_a_log_in_another_benchmarks_folder_is_checked_with_the_folders_rules(tmp_path):
    ctx = RunContext("5.1.0", "retinanet", V51_KEYS, quality_target=0.34)
    outcome = check(tmp_path, rgat_lines(benchmark="rgat"), ctx)
    f = only(outcome.findings, "run.benchmark-mismatch")
    assert (f.severity, f.line) == ("error", 3)
    # RetinaNet's rules ran (they require opt_weight_decay, R-GAT's do not).
    assert any(
        "opt_weight_decay" in x.message and "closed_retinanet.yaml" in x.hint
        for x in outcome.findings
        if x.rule == "mlperf.compliance"
    )


# --- hostile files ------------------------------------------------------------------------------------------


def test_a_2_mb_log_line_is_an_error_at_its_line_and_the_checker_is_not_run(tmp_path):
    lines = rgat_lines()
    lines.insert(7, mllog("submission_poc_name", "x" * 2_000_000, 2))
    outcome = check(tmp_path, lines)
    f = only([x for x in outcome.findings if x.severity == "error"], "run.line-too-long")
    assert (f.file, f.line) == (REL, 8) and "2,000," in f.message
    assert "mlperf.compliance" not in {x.rule for x in outcome.findings}
    assert only(outcome.findings, "mlperf.skipped")
    assert outcome.summary.success  # the lost line was not one the timing needs


def test_a_long_line_without_log_events_is_a_warning_and_the_checker_still_runs(tmp_path):
    lines = rgat_lines()
    lines.insert(
        14, "\r".join(f"{i}%|##########| {i}/100" for i in range(40_000))
    )  # a progress bar
    outcome = check(tmp_path, lines)
    f = only(outcome.findings, "run.line-too-long")
    assert (f.severity, f.line) == ("warning", 15)
    assert {x.rule for x in outcome.findings} == {"run.line-too-long"}  # checked, and compliant


def test_every_reader_of_a_log_skips_a_long_line_without_log_events_alike(tmp_path):
    """Issue 38, item 8: a 134 kB progress bar is a warning under the line-length rule; the RCP reader used to
    make the file unreadable, an error that held a published result."""
    bar = "\r".join(f"{i:3d}%|{'#' * (i // 10):10s}| {i}/100" for i in range(100)) * 60
    assert len(bar) > 134_000 and ":::MLLOG" not in bar
    (tmp_path / "clean").mkdir()
    clean = check(tmp_path / "clean", rgat_lines())
    lines = rgat_lines()
    lines.insert(14, bar)
    outcome = check(tmp_path, lines)
    f = only(outcome.findings, "run.line-too-long")
    assert f.severity == "warning" and not [x for x in outcome.findings if x.severity == "error"]
    # The RCP reader, from the parsed lines and from the whole file, reads what it reads without the bar.
    assert outcome.convergence == clean.convergence and "not_converged" in outcome.convergence
    path = tmp_path / "result_0.txt"
    assert rcp.read_run(path, "5.1.0") == clean.convergence
    found, _ = rcp.rcp_check(
        {"result_0.txt": path}, "5.1.0", "rgat", readings={"result_0.txt": outcome.convergence}
    )
    assert not [x for x in found if "line over the length limit" in x.message]
    # A log event on a line over the limit is lost to every reader alike: the RCP reader says so.
    lines[14] = mllog("submission_poc_name", "x" * 200_000, 2)
    assert check(tmp_path, lines).convergence == {"unreadable": True}
    assert rcp.read_run(path, "5.1.0") == {"unreadable": True}


@pytest.mark.parametrize("seed", range(30))
def test_prescan_finds_every_long_line_whatever_the_chunks(tmp_path, monkeypatch, seed):
    """Against a plain reading of the lines: lengths around the limit, markers and NUL-bearing lines across chunk
    ends, any chunk size."""
    import random

    from submissions.checking.rules import prescan as scan_module

    rnd = random.Random(seed)
    limit = rnd.choice([8, 20, 64])
    monkeypatch.setattr(scan_module, "CHUNK", rnd.choice([5, 16, 50, 64, 1 << 20]))
    lines = [
        (
            rnd.choice(["", "x" * rnd.randint(0, 8), "0: :::MLLOG", "\x00", "a\x00b\x00"])
            + "y" * rnd.randint(0, 3 * limit)
            + rnd.choice(["", "", "\x00"])
        ).encode()
        for _ in range(rnd.randint(0, 60))
    ]
    data = b"\n".join(lines) + rnd.choice([b"", b"\n"])
    path = tmp_path / "log.txt"
    path.write_bytes(data)
    scan = scan_module.prescan(path, limit)

    pieces = data.split(b"\n")
    if pieces[-1] == b"":
        pieces.pop()  # a final newline ends the last line; it does not start one
    long = [(n, len(p), b":::" in p) for n, p in enumerate(pieces, 1) if len(p) > limit]
    assert scan.line_count == len(pieces)
    assert (scan.long_line_count, scan.long_marker_line_count) == (
        len(long),
        sum(m for *_, m in long),
    )
    assert [(x.line, x.length, x.has_marker) for x in scan.long_lines] == long[
        : scan_module.MAX_LISTED
    ]
    nul = [n for n, p in enumerate(pieces, 1) if b"\x00" in p]
    assert (scan.first_nul_line, scan.nul_line_count) == (nul[0] if nul else None, len(nul))


@pytest.mark.parametrize("seed", range(20))
def test_prescan_finds_the_first_line_that_is_not_utf8_whatever_the_chunks(
    tmp_path, monkeypatch, seed
):
    """Against decoding each line: sequences cut by a chunk's end, an ASCII chunk that breaks one, valid ones."""
    import random

    from submissions.checking.rules import prescan as scan_module

    rnd = random.Random(seed)
    monkeypatch.setattr(scan_module, "CHUNK", rnd.choice([1, 2, 3, 7, 16, 1 << 20]))
    pieces = [
        b"ascii",
        "é".encode(),
        "€".encode(),
        "😀".encode(),
        b"\xc3",
        b"\xe2\x82",
        b"\xff",
        b"\x80",
    ]
    lines = [
        b"".join(rnd.choices(pieces, weights=[40, 5, 5, 5, 1, 1, 1, 1], k=rnd.randint(0, 6)))
        for _ in range(rnd.randint(1, 30))
    ]
    path = tmp_path / "log.txt"
    path.write_bytes(b"\n".join(lines))
    bad = []
    for n, line in enumerate(lines, 1):
        try:
            line.decode("utf-8")
        except UnicodeDecodeError as error:
            if error.end < len(line) or error.reason != "unexpected end of data" or n < len(lines):
                bad.append(
                    n
                )  # a sequence cut by the end of the file is not judged, as by an incremental decoder
    assert scan_module.prescan(path, 1000).first_non_utf8_line == (bad[0] if bad else None)


def test_binary_garbage_is_reported_quickly(tmp_path):
    import random

    garbage = random.Random(5).randbytes(300_000)
    outcome = check_run(write(tmp_path, garbage), REL, RGAT)
    assert only(outcome.findings, "run.binary-content").severity == "error"
    assert {"run.no-run-start", "run.no-run-stop", "run.binary-content"} <= rules(outcome.findings)
    assert "mlperf.compliance" not in {x.rule for x in outcome.findings}


def test_nul_bytes_on_a_line_are_binary_content_at_that_line(tmp_path):
    data = ("\n".join(rgat_lines()) + "\n").encode().replace(b'"seed"', b'"se\x00ed"')
    outcome = check_run(write(tmp_path, data), REL, RGAT)
    f = only(outcome.findings, "run.binary-content")
    assert (f.severity, f.line) == ("error", 8) and "1 line" in f.message
    assert only(outcome.findings, "mlperf.skipped")


def test_control_bytes_without_nul_are_binary_too(tmp_path):
    outcome = check_run(write(tmp_path, bytes(range(1, 32)) * 2000), REL, RGAT)
    assert only(outcome.findings, "run.binary-content").line == 1


def test_bytes_that_are_not_utf8_on_a_log_line_are_a_warning(tmp_path):
    data = ("\n".join(rgat_lines()) + "\n").encode().replace(b'"1xTEST"', b'"1xTEST\xff\xfe"')
    outcome = check_run(write(tmp_path, data), REL, RGAT)
    f = only(outcome.findings, "run.not-utf8")
    assert (f.severity, f.line) == ("warning", 7)
    assert "mlperf.compliance" not in {
        x.rule for x in outcome.findings
    }  # the checker ran and is content


def test_bytes_that_are_not_utf8_outside_log_lines_are_info(tmp_path):
    data = (
        ("\n".join(rgat_lines()) + "\n")
        .encode()
        .replace(b"Initialisation finished", b"progress \xe2\x96")
    )
    f = only(check_run(write(tmp_path, data), REL, RGAT).findings, "run.not-utf8")
    assert (f.severity, f.line) == ("info", 15)


def test_a_garbled_log_line_is_a_warning_at_its_line(tmp_path):
    lines = rgat_lines()
    lines.insert(15, ':::MLLOG {"namespace": "", "time_ms": 17600000')  # cut short
    outcome = check(tmp_path, lines)
    f = only(outcome.findings, "run.bad-line")
    assert (f.severity, f.line) == ("warning", 16)
    assert any(
        x.rule == "mlperf.compliance" and x.line == 16 for x in outcome.findings
    )  # the checker agrees


def test_an_empty_file(tmp_path):
    outcome = check(tmp_path, b"")
    assert {"run.no-run-start", "run.no-run-stop"} <= rules(outcome.findings)
    assert only(outcome.findings, "run.no-run-stop").line is None


def test_a_ruleset_mlperf_logging_does_not_know_is_said_once(tmp_path):
    ctx = RunContext("9.9.0", "rgat", V51_KEYS, quality_target=0.72)
    f = only(check(tmp_path, rgat_lines(), ctx).findings, "mlperf.unsupported-ruleset")
    assert f.severity == "info"


def test_a_fault_inside_the_compliance_check_is_an_error_not_a_crash(tmp_path, monkeypatch):
    from submissions.checking.rules.mlperf import compliance

    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(compliance, "check_file", broken)
    outcome = check(tmp_path, rgat_lines())
    f = only(outcome.findings, "mlperf.compliance")
    assert f.severity == "error" and "RuntimeError: boom" in f.message
    assert outcome.summary.success  # the run itself is fine


# --- one read of the file -----------------------------------------------------------------------------------


def test_mlperf_logging_gets_its_lines_from_our_parse_not_from_a_second_read(tmp_path, monkeypatch):
    from submissions.checking.rules.mlperf import compliance

    def read_again(*args, **kwargs):
        raise AssertionError("the file was read again")

    monkeypatch.setattr(compliance, "read_loglines", read_again)
    assert check(tmp_path, rgat_lines()).findings == []
    outcome = check(
        tmp_path, rgat_lines(last_accuracy=0.5)
    )  # the checker ran: its own finding is there
    assert {"run.quality-target", "mlperf.compliance"} <= rules(outcome.findings)


def quirky_rgat():
    """rgat_lines with prefixes, CRLF, trailing blanks, joined lines, a line the library cannot read and one
    it reads differently from us (after its last token)."""
    lines = rgat_lines(last_accuracy=0.7)
    lines = [
        ("0: " if i % 3 else "") + line + (" " if i % 4 == 1 else "")
        for i, line in enumerate(lines)
    ]
    lines[10] = lines[10].replace('"adam"', '"sgd"')
    lines.insert(15, ':::MLLOG {"key": "seed", "value": 1}')
    lines.insert(14, lines[13] + "\r" + lines[14])
    lines.insert(5, "x " + lines[5] + " " + mllog("seed", 8, 3))
    return ("\r\n".join(lines) + "\r\n").encode()


def test_the_findings_are_the_same_as_from_a_second_read(tmp_path, monkeypatch):
    from submissions.checking.rules.mlperf import compliance

    data = quirky_rgat()
    one_read = check(tmp_path, data)
    assert len([f for f in one_read.findings if f.rule == "mlperf.compliance"]) >= 3
    monkeypatch.setattr(compliance, "takes_mllog_lines", lambda ruleset: False)
    assert check(tmp_path, data) == one_read


def test_v06_logs_are_read_again_by_the_librarys_parser(tmp_path, monkeypatch):
    from submissions.checking.rules.mlperf import compliance

    calls = []
    real = compliance.read_loglines
    monkeypatch.setattr(
        compliance, "read_loglines", lambda *args: calls.append(args) or real(*args)
    )
    check(tmp_path, v06_lines(), V06)
    assert len(calls) == 1


def test_a_run_of_a_round_with_rcps_carries_the_rcp_readers_reading(tmp_path):
    from submissions.checking.rules import check_run
    from submissions.checking.rules.mlperf import rcp

    path = write(tmp_path, rgat_lines())
    reading = check_run(path, "ACME/results/sys/rgat/result_0.txt", RGAT).convergence
    assert reading == rcp.read_run(path, "5.1.0") and reading["not_converged"] == 0
    path = write(tmp_path, rgat_lines()[:3] + ["x" * 70_000] + rgat_lines()[3:])
    # A long line without a record is skipped, as every reader skips it; a record on one is lost.
    assert check_run(path, "r", RGAT).convergence == reading
    event = mllog("submission_poc_name", "x" * 70_000, 2)
    path = write(tmp_path, rgat_lines()[:3] + [event] + rgat_lines()[3:])
    assert check_run(path, "r", RGAT).convergence == {"unreadable": True}  # rcp_check refuses it
    v06 = write(tmp_path, v06_lines(), "v06.txt")
    assert check_run(v06, "r", V06).convergence is None  # v0.6 has no RCPs
