"""The v0.5 log checks (ruleset 0.5.0): tags, one run per file and event order, read from v05.toml."""

from __future__ import annotations

import functools
import math
import tomllib
from collections import Counter
from pathlib import Path

from leaderboard.catalogue import rule_catalogue

from ..logs import ParsedLog
from .findings import Findings, RunContext

RULESET = "0.5.0"
RULES_FILE = Path(__file__).with_name("v05.toml")
MAX_UNKNOWN = 20
_LISTS = ("required", "expected", "once", "known")


@functools.lru_cache(maxsize=1)
def rules() -> dict:
    """v05.toml, checked for shape (a typo there should stop the worker, not pass every log)."""
    with open(RULES_FILE, "rb") as f:
        data = tomllib.load(f)
    for name, section in [
        ("all", data.get("all")),
        *((f"benchmarks.{k}", v) for k, v in data.get("benchmarks", {}).items()),
    ]:
        if not isinstance(section, dict):
            raise ValueError(f"{RULES_FILE.name}: [{name}] is missing or not a table")
        for key in _LISTS:
            if not all(isinstance(tag, str) for tag in section.get(key, [])):
                raise ValueError(f"{RULES_FILE.name}: [{name}] {key} must be a list of tag names")
        for order in section.get("order", []):
            if (
                "key" not in order
                or ("after" in order) == ("before" in order)
                or order.get("severity") not in ("error", "warning", "info")
            ):
                raise ValueError(
                    f"{RULES_FILE.name}: [{name}] order needs key, one of after/before, a severity"
                )
    return data


def handles(ruleset: str) -> bool:
    return ruleset == RULESET


def check(log: ParsedLog, ctx: RunContext, found: Findings) -> None:
    data = rules()
    common = data["all"]
    bench = data.get("benchmarks", {}).get(ctx.benchmark)
    if bench is None:
        found.info(
            rule_catalogue.V05_UNKNOWN_BENCHMARK,
            f"There are no v0.5 tag rules for benchmark {ctx.benchmark!r}; "
            "only the common v0.5 checks ran.",
        )
        bench = {}

    def merged(key: str) -> list:
        return [*common.get(key, []), *bench.get(key, [])]

    counts = Counter(ev.key for ev in log.events)
    lines: dict[str, list[int]] = {}
    for ev in log.events:
        lines.setdefault(ev.key, []).append(ev.line)

    for tag in dict.fromkeys(merged("required")):
        if not counts[tag]:
            found.error(
                rule_catalogue.V05_REQUIRED_TAG,
                f"The log has no {tag!r} event; every v0.5 {ctx.benchmark} log must have one.",
                f"Log {tag!r} as the v0.5 reference implementation does.",
            )
    for tag in dict.fromkeys(merged("expected")):
        if not counts[tag]:
            found.warning(
                rule_catalogue.V05_EXPECTED_TAG,
                f"The log has no {tag!r} event, which v0.5 {ctx.benchmark} logs carry.",
                f"Log {tag!r} as the v0.5 reference implementation does.",
            )
    repeated = [tag for tag in dict.fromkeys(merged("once")) if counts[tag] > 1]
    if repeated:  # one finding for the file: where the second run begins
        first = min(repeated, key=lambda tag: lines[tag][1])
        shown = "; ".join(
            f"{counts[tag]} {tag!r} events (lines {', '.join(map(str, lines[tag][:5]))})"
            for tag in repeated
        )
        found.error(
            rule_catalogue.RUN_MULTIPLE_RUNS,
            f"The log holds more than one run: {shown}.",
            "Put each run in its own result_N.txt file.",
            line=lines[first][1],
        )

    known = set(merged("known"))
    unknown = [tag for tag in lines if tag not in known]
    for tag in unknown[:MAX_UNKNOWN]:
        found.info(
            rule_catalogue.V05_UNKNOWN_TAG,
            f"{tag!r} is not a v0.5 {ctx.benchmark} tag.",
            "Harmless unless it was meant to be one of the v0.5 tags (check its spelling).",
            line=lines[tag][0],
        )
    if len(unknown) > MAX_UNKNOWN:
        found.info(
            rule_catalogue.V05_UNKNOWN_TAG,
            f"{len(unknown) - MAX_UNKNOWN} more tags are not v0.5 tags (not listed).",
        )

    for rule in merged("order"):
        _check_order(log, rule, found)
    if common.get("eval_target_is_round_target"):
        _check_eval_target(log, ctx, found)


def _check_order(log: ParsedLog, rule: dict, found: Findings) -> None:
    key = rule["key"]
    if "after" in rule:
        ref = next((ev for ev in log.events if ev.key == rule["after"]), None)
        bad = ref and next(
            (ev for ev in log.events if ev.key == key and ev.time_s < ref.time_s), None
        )
        where = "before the first"
    else:
        ref = next((ev for ev in reversed(log.events) if ev.key == rule["before"]), None)
        bad = ref and next(
            (ev for ev in log.events if ev.key == key and ev.time_s > ref.time_s), None
        )
        where = "after the last"
    if bad:
        found.add(
            rule["severity"],
            rule_catalogue.V05_ORDER,
            f"{key!r} at line {bad.line} is logged {where} {ref.key!r} (line {ref.line}).",
            f"Log {key!r} {'after' if 'after' in rule else 'before'} {ref.key!r}.",
            line=bad.line,
        )


def _check_eval_target(log: ParsedLog, ctx: RunContext, found: Findings) -> None:
    ev = next((ev for ev in log.events if ev.key == "eval_target"), None)
    if ev is None or ctx.quality_target is None:
        return
    value = ev.value
    if (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and math.isfinite(value)
        and math.isclose(value, ctx.quality_target, rel_tol=1e-6)
    ):
        return
    found.warning(
        rule_catalogue.V05_EVAL_TARGET,
        f"The log's eval_target is {value!r}, not the round's quality target "
        f"{ctx.quality_target:g}.",
        "Runs are judged against the round's target; log that value.",
        line=ev.line,
    )
