"""mlperf-logging's compliance checker on one log, with the result folder's benchmark rules, as Findings.

How this differs from its command line (`python -m mlperf_logging.compliance_checker`), and why:
- The rules file is chosen by the round's benchmark key (RunContext.benchmark), never by the
  log: the checker turns the logged `submission_benchmark` (and `submission_division`) into a
  YAML path and executes the code in it, so "../training_0.7.0/common" would pick another
  round's rules. We rewrite the logged benchmark to the folder's key and accept only config
  names that are plain files inside mlperf-logging's own folders; anything else is a finding.
- Lines are read here, linearly, with the library's own per-line parser (string_to_logline);
  its reader strips prefixes with a quadratic regular expression and numbers log lines only,
  not file lines. Ours number file lines, so its messages point at the real line.
- check_run does not make us read the file a second time: our parser (parse_file's mllog_lines)
  hands over each ":::MLLOG" line with the JSON record it decoded, and a LogLine is built from
  that record exactly as string_to_logline builds it from the same text. Only lines where the
  two readings could differ go through string_to_logline: more than blanks after the record,
  several tokens or a '\\r' on the line, a record our parser did not take. A file with a
  non-ASCII or NUL-bearing token line (the library's latin-1 text is not our UTF-8 text there)
  is read again as above. The LogLine's value dict is its own, as the library makes it; the
  logged value in it is the same object as our Event's (the rules only read it).
- Its YAML files are parsed, and the rule expressions in them compiled, once per process
  (it re-reads and re-compiles them for every file and line: about 3/4 of its time), and its
  config queue is ours, not the module-global list (library.compliance_run, which gives the figures).
- A time limit (Celery's SoftTimeLimitExceeded) raised inside a rule is not lost in the
  library's bare `except:` around each rule: it is raised again when the library returns.
- Its messages are read from the checker's state, not scraped from its log output; what it
  prints or logs on the side is captured, never left on the worker's stdout.
- In imported history, its errors about how the run's metadata is logged only (metadata_only, read from its
  message shapes) are warnings beside the published score: MLCommons published the run, and its timing, its
  quality target and its count are intact. Its errors about those still fail the run; live rounds as ever.

The parser and the checker are reached through library.py (log_parser, compliance_checker), the one
module that imports mlperf-logging.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import re
from pathlib import Path

from leaderboard.catalogue import rule_catalogue

from ...budget import is_stop
from ...logs import open_binary
from ...logs.formats import mllog
from ..findings import ERROR, WARNING, Findings
from . import library

# From this ruleset on, mlperf-logging's checker judges a log as MLCommons' tools of its round did (its
# package_checker checks rulesets 1.0.0 on), and its verdict fails a run. Its 0.6.0 rules, rewritten since,
# refuse logs that round's tools accepted: 190 of the 430 published v0.6 runs (Google's logs without
# submission_poc_name or epoch records, Intel's MiniGo lines it cannot read). There, its errors are warnings.
VERDICT_FROM = (1, 0, 0)
NOT_OF_ITS_TIME = (
    " Today's mlperf-logging rules for this ruleset differ from the tools the round was judged by, which "
    "accepted such logs: a warning for reviewers, not a failed run."
)
# In imported history, an error of the checker about how a run's metadata is logged (a key missing or
# logged under another name, a submission_* key logged twice, weights_initialization's tensors) is a warning:
# MLCommons published that run, and its time, quality target and count are untouched (issue 38, item 6).
# An error about the timed region or convergence still fails it. See metadata_only.
METADATA_IN_HISTORY = (
    " Imported history: today's checker refuses the log only for how its metadata is logged; its timing, "
    "quality target and run count are intact and MLCommons published it, so the run counts and this "
    "finding is shown beside the score."
)
MAX_PARSE_FINDINGS = 20
MAX_SIDE_OUTPUT = 5
# A benchmark whose rules do not start from common.yaml ("minigo should use its dedicated config directly").
ENTRY_CONFIGS = {("0.6.0", "minigo"): "minigo.yaml"}


def supports(ruleset: str) -> bool:
    """True when mlperf-logging has compliance rules and a log parser for this training ruleset."""
    return library.available() and _has_rules(ruleset)


@functools.lru_cache(maxsize=64)
def _has_rules(ruleset: str) -> bool:
    if not (library.compliance_dir() / f"{library.USAGE}_{ruleset}" / "common.yaml").is_file():
        return False
    return library.log_parser(ruleset) is not None


def gives_verdict(ruleset: str) -> bool:
    """True when the checker's errors fail a run of this ruleset (see VERDICT_FROM)."""
    return library.ruleset_tuple(ruleset) >= VERDICT_FROM


def of_its_time(findings: list, ruleset: str) -> list:
    """The checker's findings as the round's own tools would have judged: unchanged from VERDICT_FROM on, its
    errors made warnings before."""
    if gives_verdict(ruleset):
        return findings
    return [
        dataclasses.replace(f, severity=WARNING, hint=f.hint + NOT_OF_ITS_TIME)
        if f.severity == ERROR
        else f
        for f in findings
    ]


def entry_config(ruleset: str, benchmark: str) -> str:
    return f"{library.USAGE}_{ruleset}/" + ENTRY_CONFIGS.get((ruleset, benchmark), "common.yaml")


def read_loglines(path, ruleset: str, benchmark: str | None, max_line_bytes: int):
    """(loglines, errors) as the library's parser makes them, numbered by file line.

    Lines over max_line_bytes are skipped (their events are reported by the caller). A line is
    split at '\\r' as the library's text-mode reading does; the text from the last token on is
    parsed. The logged submission_benchmark is replaced by `benchmark` when one is given.
    """
    parser = library.log_parser(ruleset)
    token_bytes = parser.token.encode("latin-1")
    loglines, errors = [], []
    with open_binary(path) as f:
        for n, raw in enumerate(_read_lines(f, max_line_bytes), start=1):
            if raw is None or token_bytes not in raw:
                continue
            text = raw.decode("latin-1")
            _read_text(
                parser, n, text[:-1] if text.endswith("\n") else text, benchmark, loglines, errors
            )
    return loglines, errors


def _read_text(
    parser, n: int, text: str, benchmark: str | None, loglines: list, errors: list
) -> None:
    """The library's loglines (or errors) for line n, its text without the LF, split at '\\r' as its reading
    does (a '\\r' before the LF only adds an empty piece)."""
    token = parser.token
    for piece in text.split("\r"):
        i = piece.rfind(token)
        if i < 0:
            continue
        piece = piece[i:].strip()
        try:
            logline = parser.read_line(n, piece)
        except Exception as exc:  # the library's parser raises more than the ValueError it catches
            if is_stop(exc):
                raise
            logline = _in_seconds(parser, n, piece)
            if logline is None:
                errors.append((n, piece, str(exc) or type(exc).__name__))
                continue
        if (
            benchmark is not None
            and logline.key == "submission_benchmark"
            and isinstance(logline.value, dict)
        ):
            logline.value["value"] = benchmark
        loglines.append(logline)


def _in_seconds(parser, n: int, piece: str):
    """The LogLine the library would make of a record that gives its time as time_s (seconds) instead of
    time_ms, with that time in milliseconds; None for any other line it cannot read. The portal reads such
    records (logs.formats.mllog) and reports them (rule_catalogue.MLPERF_TIME_IN_SECONDS); the checker then judges the rest of the line."""
    try:
        record = json.loads(piece[len(parser.token) :])
        if not isinstance(record, dict) or "time_ms" in record:
            return None
        time_ms = float(record[mllog.SECONDS]) * 1000.0
        value = {"value": record["value"], "metadata": record["metadata"]}
        return parser.logline(piece, time_ms, record["key"], value, n)
    except Exception as exc:
        if is_stop(exc):
            raise
        return None


def takes_mllog_lines(ruleset: str) -> bool:
    """True when check_file can build this ruleset's loglines from parse_file's mllog_lines."""
    return supports(ruleset) and _records_agree(ruleset)


def loglines_from(mllog_lines, ruleset: str, benchmark: str | None, skipped: list | None = None):
    """read_loglines' (loglines, errors) from parse_file's mllog_lines for the file (read with the same
    max_line_bytes), or None when they cannot stand in for reading it: a token line with NUL bytes or
    non-ASCII text (the library reads latin-1 text, and ours is UTF-8 with NULs removed).

    A line's record is used when the library would decode that very text: one line (no '\\r' but a last one
    before the LF), the record starting right after the line's last token and nothing but white space after
    it. Every other token line goes through the library's own parser, as read_loglines does.

    With `skipped` given, a line the library would read but whose key no rule names (see names_a_rule) gets
    no LogLine: its number goes in `skipped` instead. The checker passes over such lines without a trace,
    and they are most of a log (v5.1's tracked_stats: 3 lines in 4).
    """
    parser = library.log_parser(ruleset)
    token = parser.token
    skip = len(token)
    make = parser.logline
    loglines, errors = [], []
    for n, text, record, start, end in mllog_lines:
        if text is None or not text.isascii():
            return None
        body = text[:-1] if text.endswith("\r") else text
        i = body.rfind(token)
        if i < 0:
            continue
        if (
            record is not None
            and start == i + skip
            and (end == len(body) or body[end:].isspace())
            and "\r" not in body
        ):
            try:  # string_to_logline's steps on the record json.loads would make of body[i + skip:end]
                time_ms, key, value, metadata = (
                    float(record["time_ms"]),
                    record["key"],
                    record["value"],
                    record["metadata"],
                )
                if skipped is not None and type(key) is str and not names_a_rule(key):
                    skipped.append(n)
                    continue
                logline = make(body[i:end], time_ms, key, {"value": value, "metadata": metadata}, n)
            except Exception as exc:  # the library's error, from its own parser below
                if is_stop(exc):
                    raise
            else:
                if benchmark is not None and logline.key == "submission_benchmark":
                    logline.value["value"] = benchmark
                loglines.append(logline)
                continue
        _read_text(parser, n, text, benchmark, loglines, errors)
    return loglines, errors


@functools.cache
def _all_rules_text() -> str:
    return "\n".join(
        p.read_text(errors="replace") for p in sorted(library.compliance_dir().rglob("*.yaml"))
    )


@functools.lru_cache(maxsize=4096)
def names_a_rule(key: str) -> bool:
    """False when no config of mlperf-logging (of any ruleset: a rule may queue any config) holds the text
    `key`, so none has rules for it. configured_checks passes over a line whose key its config does not
    name before it reads anything else of it, so leaving such lines out changes no finding."""
    return key in _all_rules_text()


@functools.cache
def _records_agree(ruleset: str) -> bool:
    """True when the ruleset's parser reads ":::MLLOG {json}" lines and builds from sample lines the
    LogLines that loglines_from builds (a guard against another version of the library's parser)."""
    parser = library.log_parser(ruleset)
    if parser is None or parser.token != mllog.MARKER + " ":
        return False
    samples = [
        ':::MLLOG {"namespace": "", "time_ms": 1760000000123, "event_type": "POINT_IN_TIME", "key": "tracked_stats", '
        '"value": {"loss": 2.5, "lr": [1e-05, 0]}, "metadata": {"file": "train.py", "lineno": 7, "step": 3}}',
        'rank 0: :::MLLOG {"time_ms": 1.5e12, "key": "submission_benchmark", "value": null, "metadata": {}}  ',
    ]
    entries, expected = [], []
    try:
        for n, text in enumerate(samples, start=1):
            at = text.find(mllog.MARKER) + len(mllog.MARKER)
            *_, record, start, end = mllog.parse_record(text[at:])
            entries.append((n, text, record, at + start, at + end))
            _read_text(parser, n, text, "x", expected, [])
        got = loglines_from(entries, ruleset, "x")
    except Exception:
        return False
    return (
        got is not None
        and not got[1]
        and repr(got[0]) == repr(expected)
        and len(expected) == len(samples)
    )


def _read_lines(f, limit: int):
    """Raw lines, or None for a line over `limit` bytes (its rest is read and dropped in bounded chunks)."""
    readline = f.readline
    while True:
        raw = readline(limit + 1)
        if not raw:
            return
        if len(raw) > limit and raw[-1:] != b"\n":
            while True:
                rest = readline(1 << 20)
                if not rest or rest[-1:] == b"\n":
                    break
            yield None
        else:
            yield raw


def check_file(
    path,
    rel_path: str,
    ruleset: str,
    benchmark: str,
    *,
    max_line_bytes: int = 64 * 1024,
    cache: bool = True,
    mllog_lines: list | None = None,
    left_out: int = 0,
    history: bool = False,
) -> Findings:
    """Run mlperf-logging's compliance rules for `benchmark` on the log at `path`; return Findings.

    mllog_lines: what parse_file(path, max_line_bytes, mllog_lines=[]) gathered (see takes_mllog_lines);
    its records then stand in for reading the file again, with the same findings; left_out: how many lines
    parse_file left out of them (parse_file's leave_out: lines whose key no rule names). history: the run is
    imported history, where an error about metadata only is a warning (metadata_only).
    cache=False parses every YAML config and compiles every rule again, as the library does (for
    measuring what the per-process caches save)."""
    found = Findings(rel_path)
    read, skipped = None, []
    if mllog_lines is not None and takes_mllog_lines(ruleset):
        read = loglines_from(mllog_lines, ruleset, benchmark, skipped)
    loglines, errors = (
        read if read is not None else read_loglines(path, ruleset, benchmark, max_line_bytes)
    )
    checker = library.compliance_checker(ruleset)
    with library.Capture() as capture, library.compliance_run(checker.enqueue, cache=cache):
        unruled = len(skipped) + left_out if read is not None else 0
        checker.check_loglines(loglines, entry_config(ruleset, benchmark), unruled)
    _report(found, checker, loglines, errors, ruleset, capture, history)
    return found


# --- turning the checker's messages into findings ----------------------------------------------------------

_CHECK_FAILED = re.compile(r"CHECK for '(?P<key>[^']*)' failed in line (?P<line>\d+):")
_REQUIRED = re.compile(r"Required (?P<req>\S+) occurrence of '(?P<key>[^']*)' but found (?P<n>\d+)")


def _report(
    found: Findings, checker, loglines, errors, ruleset: str, capture, history: bool = False
) -> None:
    where = f"mlperf-logging {library.version()}, rules {library.USAGE}_{ruleset}"
    for n, text, error in errors[:MAX_PARSE_FINDINGS]:
        found.error(
            rule_catalogue.MLPERF_COMPLIANCE,
            f"mlperf-logging cannot read this log line ({error}): {_short(text, 160)}",
            f"Each log line must be one complete record in the {ruleset} format ({where}). "
            "Look for interleaved output from several processes or a truncated line.",
            line=n,
        )
    if len(errors) > MAX_PARSE_FINDINGS:
        found.error(
            rule_catalogue.MLPERF_COMPLIANCE,
            f"mlperf-logging cannot read {len(errors) - MAX_PARSE_FINDINGS} more log lines "
            "(not listed).",
            "See the lines listed above.",
            line=errors[MAX_PARSE_FINDINGS][0],
        )

    seconds = [
        ll.lineno
        for ll in loglines
        if ll.full_string.startswith(mllog.MARKER) and '"time_ms"' not in ll.full_string
    ]
    if seconds:
        found.warning(
            rule_catalogue.MLPERF_TIME_IN_SECONDS,
            f"{len(seconds)} log line{'s give their time' if len(seconds) > 1 else ' gives its time'} as "
            f"time_s, in seconds (the first on line {seconds[0]}), where mlperf-logging reads time_ms; the "
            "portal and the checker read them as seconds.",
            "Log time_ms, milliseconds since the epoch, as mlperf-logging's logger writes it.",
            line=seconds[0],
        )
    line_of = {}
    for ll in loglines:
        line_of.setdefault(ll.full_string, ll.lineno)
    occurrences: dict[str, list[int]] = {}
    for ll in loglines:
        occurrences.setdefault(ll.key, []).append(ll.lineno)

    for severity, messages in (
        ("warning", checker.warning_messages()),
        ("error", checker.error_messages()),
    ):
        told = set()
        for msg in messages:
            config = checker.config_of.get(msg, "")
            msg = canonical_message(msg)
            if msg in told:
                continue
            told.add(msg)
            message, hint, line = _explain(msg, line_of, occurrences)
            hint = f"{hint} ({where}{', ' + Path(config).name if config else ''})."
            if history and severity == ERROR and metadata_only(msg):
                found.warning(
                    rule_catalogue.MLPERF_COMPLIANCE, message, hint + METADATA_IN_HISTORY, line=line
                )
            else:
                found.add(severity, rule_catalogue.MLPERF_COMPLIANCE, message, hint, line=line)

    for name in checker.refused:
        found.warning(
            rule_catalogue.MLPERF_CONFIG_MISSING,
            f"The log asks mlperf-logging for the rules file {name!r}, which it does not have; "
            "those checks were not run.",
            "submission_division must be 'closed' or 'open', and the round must have rules for "
            f"this benchmark in {where}.",
        )
    if checker.crash is not None:
        config, exc = checker.crash
        found.error(
            rule_catalogue.MLPERF_COMPLIANCE,
            f"mlperf-logging's checker stopped with {type(exc).__name__}: {_short(str(exc), 200)} "
            f"while applying {Path(config).name}; its remaining checks did not run.",
            "A logged value probably has an unexpected type (e.g. text where a number is expected); "
            f"compare the log with the reference implementation's ({where}).",
        )
    side = capture.messages() + capture.printed()
    for text in side[:MAX_SIDE_OUTPUT]:
        found.info(rule_catalogue.MLPERF_OUTPUT, f"mlperf-logging said: {_short(text, 300)}")


# What the timed region and convergence are read from: a complaint about one of these keys is never metadata.
TIMED_KEYS = frozenset(
    {
        "init_start",
        "init_stop",
        "run_start",
        "run_stop",
        "block_start",
        "block_stop",
        "epoch_start",
        "epoch_stop",
        "eval_start",
        "eval_stop",
        "eval_accuracy",
    }
)
# submission_* keys whose value chooses which rules run: a bad value there hides the benchmark's checks.
_CHOOSING_KEYS = frozenset({"submission_division", "submission_benchmark"})
# The END checks' state that only weights_initialization's lines fill.
_METADATA_STATE = frozenset({"initialized_tensors"})
_FOUND = re.compile(
    r"^Required (?:EXACTLY_ONE|AT_LEAST_ONE|AT_LEAST\(\d+\)) occurrence of '(?P<key>[^']*)' but found (?P<n>\d+)"
)
_FAILED_CHECK = "Failed executing CHECK code:"
_LOGGED_KEY = re.compile(r'"key": "(?P<key>[^"]*)"')
_STATE = re.compile(r"s\['(\w+)'\]")


def metadata_only(msg: str) -> bool:
    """True when one of the checker's messages is about how the run's metadata is logged, not about its timed
    region, its convergence or its count (read from the message shapes of mlp_compliance.ComplianceChecker):

    - "Required … occurrence of 'K' but found 0": a key missing, or logged under another name (v4.0's BERT rules
      want opt_lamb_epsilon where earlier rounds logged opt_epsilon), unless K times the run or its evals;
    - "Required … of 'submission_x' but found 2 …": a submission_* key logged twice;
    - "CHECK for 'K' failed", or a rule's code failing on a line of K, where K is weights_initialization or a
      submission_* key other than the division and benchmark (their values choose the rules that run);
    - an end-of-log test that reads only the tensors weights_initialization names (initialized_tensors).

    Everything else (run_start/run_stop, init, epochs and blocks, eval_accuracy reaching the target, a
    hyperparameter's value or its differing values, an unreadable log) is not."""
    head = msg.split("\n", 1)[0]
    if m := _FOUND.match(head):
        key = m["key"]
        if key.startswith("submission_") and key not in _CHOOSING_KEYS:
            return True
        return m["n"] == "0" and key not in TIMED_KEYS
    if m := _CHECK_FAILED.match(head):
        return _metadata_key(m["key"])
    lines = msg.split("\n")
    if head.startswith("Failed executing code ") or "triggered by line:" in lines[:-1]:
        # "… code triggered by line :" then the line, or "… CHECK code:", the test, "triggered by line:", the line
        at = (
            1
            if head.startswith("Failed executing code ")
            else lines.index("triggered by line:") + 1
        )
        key = _LOGGED_KEY.search(lines[at]) if at < len(lines) else None
        return key is not None and _metadata_key(key["key"])
    if head == _FAILED_CHECK or head.startswith("failed test: "):
        state = set(_STATE.findall(lines[1] if head == _FAILED_CHECK else head))
        return bool(state) and state <= _METADATA_STATE
    return False


def _metadata_key(key: str) -> bool:
    return key == "weights_initialization" or (
        key.startswith("submission_") and key not in _CHOOSING_KEYS
    )


_ALTERNATIVES = re.compile(r"^(Required AT_LEAST_ONE occurrence of )('[^']*'(?: or '[^']*')+)$")
_DIFFERENT_VALUES = re.compile(r"(with different values: \[)(.*)(\])$")


def canonical_message(msg: str) -> str:
    """The checker's message with the names and values it lists from a set in sorted order. The library
    builds them from sets, whose order follows the process's hash seed: the same log got one message or two
    ('a' or 'b', and 'b' or 'a'), and one bundle 110, 111 or 112 warnings depending on the worker."""
    if m := _ALTERNATIVES.match(msg):
        return m[1] + " or ".join(sorted(m[2].split(" or ")))
    if m := _DIFFERENT_VALUES.search(msg):
        return msg[: m.start()] + m[1] + ", ".join(sorted(m[2].split(", "))) + m[3]
    return msg


def _explain(msg: str, line_of: dict, occurrences: dict) -> tuple[str, str, int | None]:
    """(message, hint, line) in plain words for one of the checker's messages."""
    lines = msg.split("\n")
    head = lines[0]
    m = _CHECK_FAILED.match(head)
    if m:
        test = next(
            (x[len("failed test: ") :] for x in lines[2:] if x.startswith("failed test: ")), ""
        )
        return (
            f"The log line for '{m['key']}' fails the rule `{_short(test.strip(), 300)}`.",
            "Log this key with the value, metadata and order the rule expects",
            int(m["line"]),
        )
    if head == "Failed executing CHECK code:":
        test = lines[1] if len(lines) > 1 else ""
        if len(lines) > 3 and lines[2] == "triggered by line:":
            return (
                f"A rule could not be evaluated on this line: `{_short(test.strip(), 300)}` "
                "(a value or metadata field it needs is missing or of another type).",
                "Log the key with the value type and metadata the reference implementation uses",
                line_of.get(lines[3]),
            )
        return (
            f"A rule at the end of the log could not be evaluated: `{_short(test.strip(), 300)}`.",
            "Check that every key the rule reads is logged",
            None,
        )
    if head.startswith("Failed executing code ") and len(lines) > 1:
        action = head.split()[3] if len(head.split()) > 3 else ""
        return (
            f"The rule's {action} code could not run on this line.",
            "Log the key with the value type and metadata the reference implementation uses",
            line_of.get(lines[1]),
        )
    if head.startswith("failed test: "):
        return (
            f"The log as a whole fails the rule `{_short(head[len('failed test: ') :].strip(), 300)}`.",
            "This rule is checked at the end of the log (e.g. a value required over the whole run)",
            None,
        )
    m = _REQUIRED.match(head)
    if m:
        seen = occurrences.get(m["key"], [])
        line = seen[1] if len(seen) > 1 else None
        return (
            _short(head, 400) + ".",
            f"Log '{m['key']}' as the rule requires ({m['req']})",
            line,
        )
    if head.startswith("Failed checks for "):
        return (
            _short(head, 400) + " (no line satisfies it).",
            "At least one logged value must satisfy this rule, e.g. the final eval reaching the target",
            None,
        )
    return _short(" ".join(x.strip() for x in lines[:3]), 400), "See the mlperf-logging rule", None


def _short(text: str, limit: int) -> str:
    text = text.replace("\n", " ")
    return text if len(text) <= limit else text[: limit - 1] + "…"
