"""mlperf-logging's compliance checker as the rules run it: right config, real line numbers, guarded, cached."""

import builtins
import dataclasses
import json
import os
import re

import pytest
import yaml

from bench import baseline
from submissions.checking.rules.mlperf import compliance, library
from submissions.checking.rules.mlperf.library import LinearRe
from submissions.synthetic.logs import mllog_run

from ...conftest import ROOT, c_scanner
from ...mllogs import REL, T0, generated_rgat_log, mllog, write

mlp = pytest.importorskip("mlperf_logging.compliance_checker.mlp_compliance")


@pytest.fixture
def media():
    """Shadow the project-wide autouse fixture that needs Django settings: these tests are pure Python."""


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
    assert errors == [] and [
        ll.value["value"] for ll in loglines if ll.key == "submission_benchmark"
    ] == ["retinanet"]
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
    assert (
        len(refused) == 1
        and refused[0].severity == "warning"
        and "evil_common.yaml" in refused[0].message
    )
    assert any(f.rule == "mlperf.compliance" and "submission_division" in f.message for f in found)


@pytest.mark.parametrize("name", ["training_5.1.0/closed_rgat.yaml", "training_0.6.0/minigo.yaml"])
def test_its_own_configs_are_accepted(name):
    assert library.config_path(name) == library.compliance_dir() / name


@pytest.mark.parametrize(
    "name",
    [
        "training_5.1.0/../training_0.7.0/common.yaml",
        "training_5.1.0/nope.yaml",
        "/etc/passwd",
        "training_5.1.0/closed_../x.yaml",
        "training_5.1.0/common.yml",
    ],
)
def test_other_config_names_are_refused(name):
    assert library.config_path(name) is None


def test_minigo_v06_starts_from_its_own_config():
    assert compliance.entry_config("0.6.0", "minigo") == "training_0.6.0/minigo.yaml"
    assert compliance.entry_config("0.6.0", "resnet") == "training_0.6.0/common.yaml"
    assert compliance.entry_config("5.1.0", "rgat") == "training_5.1.0/common.yaml"


def test_a_crash_inside_the_library_becomes_a_finding(tmp_path):
    lines = generated_rgat_log().splitlines()
    at = next(i for i, line in enumerate(lines) if '"eval_accuracy"' in line)
    lines[at] = re.sub(
        r'"value": [0-9.]+', '"value": "high"', lines[at]
    )  # `v['value'] >= 0.72` raises
    found = compliance.check_file(write(tmp_path, "\n".join(lines)), REL, "5.1.0", "rgat")
    assert any(f.severity == "error" and "stopped with TypeError" in f.message for f in found)


def test_lines_the_library_cannot_read_are_errors_at_their_line(tmp_path):
    lines = generated_rgat_log().splitlines()
    lines.insert(
        3, ':::MLLOG {"key": "seed", "value": 1}'
    )  # no time_ms: a KeyError the library does not catch
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
    before = (
        mlp.yaml,
        mlp.enqueue_config,
        "eval" in vars(mlp),
        "exec" in vars(mlp),
        list(mlp.enqueued_configs),
    )
    compliance.check_file(write(tmp_path, generated_rgat_log()), REL, "5.1.0", "rgat")
    assert (
        mlp.yaml,
        mlp.enqueue_config,
        "eval" in vars(mlp),
        "exec" in vars(mlp),
        list(mlp.enqueued_configs),
    ) == before
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


@pytest.mark.parametrize(
    "line",
    [
        "xx :::MLLOG {}",
        ":::MLLOG a :::MLLOG b",
        "no token here",
        "0: " + ":::MLLOG " * 3 + "{...}",
        ":::MLLOG",
    ],
)
def test_the_linear_prefix_strip_matches_the_librarys_regex(line):
    token = ":::MLLOG "
    assert LinearRe(token).sub(".*" + token, token, line) == re.sub(".*" + token, token, line)


def test_the_baseline_runs_the_library_on_every_file(tmp_path):
    paths = [
        (write(tmp_path, generated_rgat_log(seed), f"result_{seed}.txt"), "rgat")
        for seed in range(3)
    ]
    assert baseline.run_mlperf_checker_sequentially(paths, "5.1.0") == 3


# --- the loglines check_run hands over (parse_file's mllog_lines) are the ones read_loglines makes ----------


def kept_loglines(path, ruleset="5.1.0", benchmark="rgat", limit=64 * 1024):
    from submissions.checking.logs import parse_file

    kept = []
    log = parse_file(path, max_line_bytes=limit, mllog_lines=kept)
    assert repr(log) == repr(
        parse_file(path, max_line_bytes=limit)
    )  # keeping the lines changes nothing else
    return compliance.loglines_from(kept, ruleset, benchmark)


def same_loglines(got, want):
    """Equal down to the repr (types of values, order of metadata keys; NaN is not equal to itself)."""
    return got is not None and repr(got) == repr(want)


def test_the_handed_over_lines_give_the_loglines_the_library_reads(tmp_path):
    path = write(tmp_path, generated_rgat_log())
    got = kept_loglines(path, benchmark="retinanet")
    want = compliance.read_loglines(path, "5.1.0", "retinanet", 64 * 1024)
    assert want[0] and same_loglines(got, want)
    assert [ll.value["value"] for ll in got[0] if ll.key == "submission_benchmark"] == ["retinanet"]
    assert all(
        "file" in ll.value["metadata"] for ll in got[0]
    )  # the library's metadata, file and lineno kept


RECORD = mllog("tracked_stats", {"loss": 2.5, "lr": [1e-05, 0]}, 5, step=3)
OTHER_FORMATS = [  # lines that make our parser look for another format's marker first
    ':::MLL 1560000000.1 run_start: {"value": null, "metadata": {"x": 1}}',
    "MLPerf: resnet [06/13/19 00:30:56], run_start",
    ":::MLPv0.5.0 resnet 1541640000.1 (x.py:1) run_start",
]
QUIRKS = [
    RECORD,
    RECORD + "\r",
    RECORD + "  \t",
    RECORD + " x",
    RECORD + "}",
    "0: " + RECORD,
    "0: " + RECORD + "\r",
    RECORD.replace(":::MLLOG ", ":::MLLOG  "),
    RECORD.replace(":::MLLOG ", ":::MLLOG"),
    RECORD.replace(":::MLLOG ", ":::MLLOG\t"),
    ":::MLLOG " + RECORD,
    RECORD + " " + RECORD,
    RECORD + "\r" + RECORD,
    "progress 10%\r" + RECORD,
    RECORD + "\r\r",
    ':::MLLOG {"key": "seed", "value": 1}',
    ':::MLLOG {"time_ms": 1, "key": 5, "value": 1, "metadata": {}}',
    ':::MLLOG {"time_ms": "1.2.3", "key": "a"}',
    ':::MLLOG {"time_ms": 1, "key": "a", "value": 1}',
    ':::MLLOG {"time_ms": 1, "key": "a", "metadata": {}}',
    ':::MLLOG {"time_ms": 1, "key": "a", "value": 1, "metadata": 7}',
    ":::MLLOG [1, 2]",
    ':::MLLOG {"time_ms": 1',
    ':::MLLOG {"time_ms": NaN, "key": "a", "value": Infinity, "metadata": {}}',
    ":::MLLOG ",
    ":::MLLOG",
    mllog("submission_benchmark", {"nested": 1}, 2),
    mllog("submission_benchmark", "rgat", 2).replace('"rgat"', "null"),
    ':::MLL 1560000000.1 run_start: {"value": null, "metadata": {"x": 1}} :::MLLOG {}',
    ':::MLL 1560000000.1 run_start: {"value": null} ' + RECORD,
    OTHER_FORMATS[0] + " " + RECORD,
    ":::MLPv0.5.0 resnet 1541640000.1 (x.py:1) run_start " + RECORD,
    "MLPerf: resnet [06/13/19 00:30:56], x " + RECORD,
    "noise without a token",
    "",
    " ",
    "\x0b" + RECORD + "\x0c",
    RECORD + "\x1c",
    ':::MLLOG{"a": ":::MLLOG {}", "time_ms": 1, "key": "k", "value": 1, "metadata": {}}',  # the last token is not ours
    '0: :::MLLOG {"a": ":::MLLOG {}", "time_ms": 1, "key": "k", "value": 1, "metadata": {}}',
]


@pytest.mark.parametrize("line", QUIRKS)
def test_every_kind_of_token_line_reads_as_the_library_reads_it(tmp_path, line):
    text = "\n".join(
        [
            mllog("init_start", None, 1),
            line,
            RECORD,
            line,
            *[x for other in OTHER_FORMATS for x in (other, line)],
            RECORD,
            line,
        ]
    )
    for data in (text, text + "\n", text.replace("\n", "\r\n")):
        path = write(tmp_path, data)
        assert same_loglines(
            kept_loglines(path), compliance.read_loglines(path, "5.1.0", "rgat", 64 * 1024)
        ), data


@pytest.mark.parametrize("seed", range(40))
def test_random_files_of_quirky_lines_read_as_the_library_reads_them(tmp_path, monkeypatch, seed):
    import random

    from submissions.checking.logs import parse as log_parser

    rnd = random.Random(seed)
    monkeypatch.setattr(log_parser, "BLOCK_SIZE", rnd.choice([7, 64, 300, 4 << 20]))
    limit = rnd.choice([200, 250, 64 * 1024])
    lines = [
        rnd.choice(
            QUIRKS
            + OTHER_FORMATS
            + [RECORD] * 10
            + ["x" * rnd.randint(150, 400), "y :::" + "z" * rnd.randint(190, 260)]
        )
        for _ in range(rnd.randint(0, 30))
    ]
    data = rnd.choice(["\n", "\r\n"]).join(lines) + rnd.choice(["", "\n", "\r"])
    path = write(tmp_path, data)
    got = kept_loglines(path, limit=limit)
    assert same_loglines(got, compliance.read_loglines(path, "5.1.0", "rgat", limit))


def test_ordinary_token_lines_are_not_decoded_again(tmp_path, monkeypatch):
    parser = library.log_parser("5.1.0")
    assert compliance.takes_mllog_lines("5.1.0")  # checked before string_to_logline is taken away

    def decode_again(*args):
        raise AssertionError("string_to_logline called")

    without = dataclasses.replace(parser, read_line=decode_again)
    monkeypatch.setattr(library, "log_parser", lambda ruleset: without)
    lines = generated_rgat_log().splitlines()
    lines = [
        ("0: " if i % 3 else "") + line + ("  " if i % 2 else "") for i, line in enumerate(lines)
    ]
    for data in ("\n".join(lines), "\r\n".join(lines) + "\r\n"):
        loglines, errors = kept_loglines(write(tmp_path, data))
        assert len(loglines) == sum(":::MLLOG " in line for line in lines) > 30 and not errors


@pytest.mark.parametrize(
    "data",
    [
        (RECORD + "\n")
        .encode()
        .replace(b"loss", "loß".encode()),  # UTF-8, read as latin-1 by the library
        (RECORD + "\n" + RECORD + "\n")
        .encode()
        .replace(b"loss", b"lo\x00ss", 1),  # NULs removed by our parser
    ],
)
def test_a_token_line_our_parser_reads_differently_makes_the_file_read_again(tmp_path, data):
    path = write(tmp_path, data)
    assert kept_loglines(path) is None
    loglines, errors = compliance.read_loglines(path, "5.1.0", "rgat", 64 * 1024)
    found = compliance.check_file(path, REL, "5.1.0", "rgat", mllog_lines=[(1, None, None, 0, 0)])
    assert found == compliance.check_file(path, REL, "5.1.0", "rgat")


def test_non_ascii_text_outside_token_lines_does_not_matter(tmp_path):
    path = write(tmp_path, "épreuve\n" + RECORD + "\n")
    assert same_loglines(
        kept_loglines(path), compliance.read_loglines(path, "5.1.0", "rgat", 64 * 1024)
    )


def test_only_rulesets_whose_parser_builds_loglines_as_we_do_take_the_lines():
    assert compliance.takes_mllog_lines("5.1.0") and compliance.takes_mllog_lines(
        "1.0.0"
    )  # dataclass, namedtuple
    assert not compliance.takes_mllog_lines("0.6.0")  # `:::MLL` lines
    assert not compliance.takes_mllog_lines("0.5.0") and not compliance.takes_mllog_lines("9.9.0")


def test_check_file_gives_the_same_findings_from_the_handed_over_lines(tmp_path):
    from submissions.checking.logs import parse_file

    lines = generated_rgat_log().splitlines()
    at = next(i for i, line in enumerate(lines) if '"opt_name"' in line)
    lines[at] = "0: " + lines[at].replace('"adam"', '"sgd"') + "  \r"
    lines.insert(3, ':::MLLOG {"key": "seed", "value": 1}')
    lines.insert(5, lines[5] + "\r" + lines[6])
    path = write(tmp_path, "\n".join(lines))
    kept = []
    parse_file(path, max_line_bytes=64 * 1024, mllog_lines=kept)
    found = compliance.check_file(path, REL, "5.1.0", "rgat", mllog_lines=kept)
    assert len(found) >= 2 and found == compliance.check_file(path, REL, "5.1.0", "rgat")


def test_lines_no_rule_names_are_left_out_without_changing_the_findings(tmp_path):
    from submissions.checking.logs import parse_file

    assert not compliance.names_a_rule("tracked_stats") and compliance.names_a_rule("eval_accuracy")
    lines = generated_rgat_log().splitlines()
    stats = [mllog("tracked_stats", {"loss": 1.5}, 10, step=i) for i in range(5)]
    lines[6:6] = stats + [stats[0][:-20]]  # the last one is cut short: the library cannot read it
    path = write(tmp_path, "\n".join(lines))
    kept, skipped = [], []
    parse_file(path, max_line_bytes=64 * 1024, mllog_lines=kept)
    loglines, errors = compliance.loglines_from(kept, "5.1.0", "rgat", skipped)
    assert skipped[:5] == [7, 8, 9, 10, 11] and [n for n, *_ in errors] == [12]
    assert all(ll.key != "tracked_stats" for ll in loglines)
    found = compliance.check_file(path, REL, "5.1.0", "rgat", mllog_lines=kept)
    assert found == compliance.check_file(path, REL, "5.1.0", "rgat") and any(
        f.line == 12 for f in found
    )


def test_a_log_of_only_unruled_lines_still_has_log_lines(tmp_path):
    from submissions.checking.logs import parse_file

    for text, empty in (
        (mllog("tracked_stats", {"loss": 1.5}) + "\n", False),
        ("just noise\n", True),
    ):
        path = write(tmp_path, text)
        kept = []
        parse_file(path, max_line_bytes=64 * 1024, mllog_lines=kept)
        found = compliance.check_file(path, REL, "5.1.0", "rgat", mllog_lines=kept)
        assert found == compliance.check_file(path, REL, "5.1.0", "rgat")
        assert any("No log lines detected" in f.message for f in found) == empty


# --- lines no one reads (tracked_stats) are left out of the parse, and nothing a check says changes ---------------

LEAN_QUIRKS = QUIRKS + [
    mllog("tracked_stats", {"eval_accuracy": 0.5}, 5),  # a word the RCP reader acts on
    mllog("tracked_stats", {"x": 1}, 5, benchmark="rgat"),  # summarize's benchmark hint
    mllog("tracked_stats", {"x": "é"}, 5),
    mllog("tracked_stats", {"x": 1e400}, 5).replace("Infinity", "1e400"),
    RECORD.replace('"time_ms": ', '"time_ms": "').replace(
        ', "event_type"', '", "event_type"'
    ),  # a string time
    RECORD.replace('"key": "tracked_stats"', '"key": "tracked_stats", "key": "eval_accuracy"'),
    RECORD.replace(
        '"key": "tracked_stats"', '"key": "seed", "key": "tracked_stats"'
    ),  # json reads the last
    mllog("seed", {"key": "tracked_stats"}, 5),
    mllog("tracked_stats", {"key": "tracked_stats"}, 5),
    RECORD.replace('"step": 3', '"\\u0062enchmark": "rgat"'),  # "benchmark", escaped
    mllog("run_stop", None, 6, status="success"),
    mllog("run_start", None, 1),
    mllog("eval_accuracy", 0.73, 5),
]


def outcome_with_and_without_leaving_out(path, monkeypatch):
    from submissions.checking.rules import RunContext, check_run
    from submissions.checking.rules import run as run_rules

    ctx = RunContext("5.1.0", "rgat", frozenset({"rgat", "retinanet"}), quality_target=0.72)
    lean = check_run(path, REL, ctx)
    with monkeypatch.context() as m:
        m.setattr(run_rules, "_unread", lambda key: False)
        full = check_run(path, REL, ctx)
    return lean, full


@pytest.fixture(params=["C", "Python"])
def scanner(request, monkeypatch):
    """Each leave-out test runs with the C scanner and with the Python code it stands in for."""
    from submissions.checking.logs import leave_out

    if request.param == "Python":
        monkeypatch.setattr(leave_out, "_scan", None)
    else:
        c_scanner()
    return request.param


@pytest.mark.parametrize("seed", range(40))
def test_leaving_unread_lines_out_changes_no_finding_summary_or_rcp_reading(
    tmp_path, monkeypatch, seed, scanner
):
    import random

    from submissions.checking.logs import parse as log_parser

    rnd = random.Random(seed)
    monkeypatch.setattr(log_parser, "BLOCK_SIZE", rnd.choice([7, 64, 300, 4 << 20]))
    lines = generated_rgat_log(seed).splitlines()
    for _ in range(rnd.randint(0, 40)):
        lines.insert(
            rnd.randint(0, len(lines)), rnd.choice(LEAN_QUIRKS + [RECORD] * 20 + OTHER_FORMATS)
        )
    path = write(tmp_path, rnd.choice(["\n", "\r\n"]).join(lines) + rnd.choice(["", "\n"]))
    lean, full = outcome_with_and_without_leaving_out(path, monkeypatch)
    assert lean.findings == full.findings and lean.convergence == full.convergence
    assert repr(lean.summary) == repr(full.summary)


# Lines that pass or fail one of _LeftOut's terms by a character, for judging C and Python alike.
LEAVE_OUT_EDGES = [
    RECORD,
    RECORD + "\r",
    RECORD + "\r\r",
    "0: " + RECORD,
    RECORD.replace(":::MLLOG ", "::::MLLOG "),
    RECORD.replace(":::MLLOG ", ":::::MLLOG "),
    RECORD.replace(":::MLLOG ", ":::MLLOG  "),
    RECORD + " :::",
    RECORD.replace('"loss"', '"::"'),
    RECORD.replace('"loss"', '":::MLLOG {"'),
    RECORD.replace('"loss"', '"l\\u00e9"'),
    RECORD.replace('"loss"', '"eval_accuracy"'),
    RECORD.replace('"loss"', '"eval_accurac"'),
    RECORD + "benchmark",
    "benchmark" + RECORD,
    RECORD.replace('"loss"', '"MLPerf: "'),
    RECORD.replace('"loss"', '"MLPerf:"'),
    RECORD.replace('"loss"', '"a\rb"'),
    RECORD.replace('"loss"', '"lé"'),
    re.sub(
        r'"time_ms": \d+', '"time_ms": "5"', RECORD
    ),  # a string time: it decodes, but not to a head
    RECORD.replace('"key": "tracked_stats"', '"key": "tracked_stats", "key": "seed"'),
    'x "key": "tracked_stats"',
    RECORD.replace('"key": "tracked_stats"', '"key": "tracked_stats" "key": "tracked_stats"'),
    RECORD[:-1],
    "",
    mllog("tracked_stats", {"x": "run_stop"}, 7),
    mllog("seed", 1, 2),
    "noise",
    "\\u",
    RECORD + "::",
    RECORD + " ::::::",
    RECORD.replace(":::MLLOG ", "::::::MLLOG "),
    RECORD.replace('"time_ms"', '"time_s"'),  # read by the parser (in seconds), never left out
    RECORD.replace(":::MLLOG ", ":::MLLOG  "),
    "[1,0]<stdout>: " + RECORD,
    RECORD[:40]
    + RECORD,  # a record cut by the next: mlperf-logging reads the text after the last marker
    RECORD + "\\u",
    RECORD + "\\",
    RECORD + " run_sto",
    RECORD + " run_stop",
    "run_stop" + RECORD,
    "x :::MLLOG",
    "x :::MLLOG {",
    ":",
    "::",
    ":::",
]


def test_the_c_scanner_leaves_out_the_lines_the_python_code_leaves_out(monkeypatch):
    """Random texts of those lines (an LF-less last line, one with two markers beside one with none, ...): the C
    scanner and the Python code give the same text, offsets and times; and each line is left out exactly when it
    passes every term on its own."""
    import random

    from submissions.checking.logs import leave_out

    c_scanner()
    judge = leave_out.LeftOut(["tracked_stats"], ("run_stop", "eval_accuracy"))
    rnd = random.Random(3)
    texts = [
        "\n".join(
            [
                RECORD.replace('"value": {"loss"', '"value": ":::MLLOG {", "x": {"loss"'),
                'x "key": "tracked_stats"',
                RECORD,
            ]
        )
        + "\n"
    ]
    texts += [
        "\n".join(rnd.choices(LEAVE_OUT_EDGES, k=rnd.randint(1, 30))) + rnd.choice(["", "\n"])
        for _ in range(3000)
    ]
    for text in texts:
        in_c = judge.blank(text)
        with monkeypatch.context() as m:
            m.setattr(leave_out, "_scan", None)
            in_python = judge.blank(text)
        assert in_c == in_python, text
        for raw in text.split("\n")[:-1]:
            left_out = judge.blank(raw + "\n") is not None
            line = raw.removesuffix("\r")
            assert left_out == (
                judge._plain(line, 1)
                and judge._decode(leave_out._records([line]), ["tracked_stats"]) is not None
                and '"key": "tracked_stats"' in line
            ), line


def test_the_c_scanner_refuses_what_it_cannot_judge():
    scan = c_scanner()
    assert (
        scan.candidates("caf\u00e9 " + RECORD + "\n", '"key": "tracked_stats"', ":::MLLOG", ("x",))
        is None
    )
    words = (w for w in ["loss", "eval"])  # a generator: the words live only in the list made of it
    assert scan.candidates(
        RECORD + "\n" + RECORD.replace('"loss"', '"l"') + "\n",
        '"key": "tracked_stats"',
        ":::MLLOG",
        words,
    )[0] == [len(RECORD) + 1, 2 * len(RECORD) - 2]
    for args in (
        ("t", "a\nb", ":::MLLOG", ()),
        ("t", "", ":::MLLOG", ()),
        ("t", "k", ":::MLLOG", ("é",)),
        ("t", "k", ":::MLLOG", ("",)),
        ("t", "k", ":::MLLOG", ("w",) * 33),
        ("t", "k", "MLLOG", ()),
        ("t", "k", ":::ML:LOG", ()),
    ):  # the marker's one run of colons is where the line's record starts
        with pytest.raises(ValueError):
            scan.candidates(*args)
    from submissions.checking.logs import leave_out

    assert (
        scan.cut("abcdef", [1, 2, 4, 6])
        == leave_out.cut_in_python("abcdef", [1, 2, 4, 6])
        == ("acd", [1, 3])
    )
    assert scan.cut("abcdef", []) == leave_out.cut_in_python("abcdef", []) == ("abcdef", [])
    for spans in ([2, 1], [1, 3, 2, 4], [0, 7], [1]):
        with pytest.raises(ValueError):
            scan.cut("abcdef", spans)


def test_unread_lines_are_counted_not_kept(tmp_path):
    from submissions.checking.logs import parse_file
    from submissions.checking.rules.run import _unread

    lines = [
        mllog("run_start", None, 1),
        RECORD,
        RECORD,
        "0: " + RECORD,
        "10%\r" + RECORD,
        mllog("tracked_stats", {"run_stop": 1}, 7),
        mllog("tracked_stats", {"x": 1}, 8, benchmark="rgat"),
        RECORD.replace('"lr"', '"l\u00e9"'),
        RECORD + "\r",
        RECORD.replace(":::MLLOG ", ":::MLLOG"),
        mllog("run_stop", None, 9),
    ]
    path = write(tmp_path, "\n".join(lines) + "\n")
    kept = []
    # Two keys, as the lines of either are looked for (no line here has the key "x").
    log = parse_file(
        path,
        64 * 1024,
        mllog_lines=kept,
        leave_out=[k for k in ("tracked_stats", "x") if _unread(k)],
        keep_words=("run_stop",),
    )
    # Read as usual: the line with a CR inside, with a keep word, with "benchmark", with a non-ASCII character,
    # with no space after the marker (mlperf-logging's parser does not read it). A CR before the LF is no bar.
    assert log.left_out == 4
    assert [(ev.key, ev.line) for ev in log.events] == [
        ("run_start", 1),
        ("tracked_stats", 5),
        ("tracked_stats", 6),
        ("tracked_stats", 7),
        ("tracked_stats", 8),
        ("tracked_stats", 10),
        ("run_stop", 11),
    ]
    assert [n for n, *_ in kept] == [1, 5, 6, 7, 8, 10, 11] and log.line_count == 11
    assert parse_file(path, 64 * 1024).problems == log.problems == []


def test_a_log_of_only_unread_lines_still_has_log_lines(tmp_path, monkeypatch):
    path = write(tmp_path, RECORD + "\n" + RECORD + "\n")
    lean, full = outcome_with_and_without_leaving_out(path, monkeypatch)
    assert lean.findings == full.findings
    assert not any("No log lines detected" in f.message for f in lean.findings)


def test_the_findings_of_a_log_do_not_depend_on_the_workers_hash_seed(tmp_path):
    """mlperf-logging lists alternatives ('block_start' or 'epoch_start') from sets, whose order follows the
    process's hash seed: the same log had one finding or two, by worker. Twelve seeds give one list here."""
    import subprocess
    import sys

    text = mllog_run(
        benchmark="rgat",
        org="ACME",
        division="closed",
        status="onprem",
        platform="sys",
        seed=1,
        start_ms=T0,
        minutes=10,
        target=0.72,
    )
    kept = [line for line in text.splitlines() if "epoch_st" not in line and "block_st" not in line]
    log = tmp_path / "result_0.txt"
    log.write_text("\n".join(kept) + "\n")
    program = (
        "import sys, json; from submissions.checking.rules.mlperf import compliance; "
        "found = compliance.check_file(sys.argv[1], 'r/result_0.txt', '5.1.0', 'rgat'); "
        "print(json.dumps(sorted([f.severity, f.message] for f in found)))"
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", program, str(log)],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": str(seed)},
            cwd=ROOT,
        ).stdout
        for seed in range(12)
    }
    assert len(outputs) == 1, outputs
    assert "block_start" in outputs.pop()  # the alternatives were reported
