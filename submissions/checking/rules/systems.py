"""check_system(): a system description's required fields, from mlperf-logging where it checks them, else systems.toml."""

from __future__ import annotations

import functools
import json
import os
import tempfile
import tomllib
from pathlib import Path

from leaderboard.catalogue import rule_catalogue

from .. import systems as descriptions
from ..budget import is_stop
from .findings import Findings, SystemFacts
from .mlperf import library

RULES_FILE = Path(__file__).with_name("systems.toml")
LIBRARY_FIRST_RULESET = (1, 0, 0)  # the package checker checks system descriptions from 1.0.0 on
MAX_LISTED = 10
_MISSING = "Missing field "
# mlperf-logging's list of status values ("Available on-premise", ...) is a rule of ruleset 4.1.0 (its checker
# tests `major >= 4`, so it refuses 4.0.0's own values too: 79 of the 97 v4.0 descriptions).
_STATUS = "Field status contains a non valid value"
STATUS_RULE_FROM = (4, 1, 0)
# Fields mlperf-logging's checker joins as text (system_desc_checker's table_csv_prefix): a number, list or null
# there raised TypeError inside it (found by fuzzing). Such a value is an error here, and the checker is given it
# as text so that its other checks still run.
LIBRARY_TEXT_FIELDS = (
    "submitter",
    "system_name",
    "host_processor_model_name",
    "host_processor_core_count",
    "accelerator_model_name",
    "accelerators_per_node",
    "framework",
)


@functools.lru_cache(maxsize=1)
def rules() -> dict:
    with open(RULES_FILE, "rb") as f:
        return tomllib.load(f)


def _library_check(description: dict, ruleset: str) -> tuple[bool, list[str]]:
    """(valid, reasons) from mlperf-logging's system_desc_checker run on `description`."""
    fd, name = tempfile.mkstemp(suffix=".json", prefix="system-")
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(description, f)
        with library.Capture() as capture:
            valid = library.check_system_desc(name, ruleset)
    finally:
        os.unlink(name)
    reasons: list[str] = []
    for (
        record
    ) in capture.records:  # logging.error(' ... failed for %s : %s', system_name, invalid_reasons)
        if (
            isinstance(record.args, tuple)
            and len(record.args) == 2
            and isinstance(record.args[1], list)
        ):
            reasons.extend(str(r) for r in record.args[1])
    return bool(valid), reasons


@functools.lru_cache(maxsize=32)
def library_required_fields(ruleset: str) -> tuple[str, ...]:
    """mlperf-logging's required system.json fields: what it reports missing from an empty description."""
    if not library.available():
        return ()
    try:
        _, reasons = _library_check({}, ruleset)
    except Exception:  # an older or newer library that does not take this ruleset
        return ()
    return tuple(r[len(_MISSING) :] for r in reasons if r.startswith(_MISSING))


def uses_library(description_format: str, ruleset: str) -> bool:
    return (
        description_format != "entry.json"
        and library.ruleset_tuple(ruleset) >= LIBRARY_FIRST_RULESET
        and bool(library_required_fields(ruleset))
    )


def check_system(system: SystemFacts, ruleset: str) -> list:
    """Findings about the system description itself (file = its bundle-relative path). An exception the checks
    did not expect (in them or in mlperf-logging's checker) is an error finding on the file, not a crash of the
    step that asked (finalize)."""
    found = Findings(system.description_path)
    try:
        _check_system(found, system, ruleset)
    except Exception as exc:
        if is_stop(exc):
            raise
        found.error(
            rule_catalogue.SYSTEM_CHECK_CRASHED,
            f"Checking the system description failed inside the portal "
            f"({type(exc).__name__}: {str(exc)[:200]}); its checks are not complete.",
            "A fault in the portal, not necessarily in the file: report it to the portal's administrators "
            "with this file.",
        )
    return list(found)


def _check_system(found: Findings, system: SystemFacts, ruleset: str) -> None:
    desc = system.description if isinstance(system.description, dict) else {}
    if system.description_format == "entry.json":
        spec = rules()["entry_json"]
        _require(found, desc, spec["required"], spec.get("expected", []), "the entry.json template")
        nodes = desc.get("nodes")
        if isinstance(nodes, list):
            for i, node in enumerate(nodes, start=1):
                if not isinstance(node, dict):
                    found.error(
                        rule_catalogue.SYSTEM_REQUIRED_FIELD,
                        f"Node group {i} in 'nodes' is not a table of fields.",
                        "Describe each node group as a JSON object.",
                    )
                    continue
                _require(
                    found,
                    node,
                    spec["node_required"],
                    spec.get("node_expected", []),
                    "the entry.json template",
                    where=f"node group {i} of 'nodes'",
                )
        elif "nodes" in desc:
            found.error(
                rule_catalogue.SYSTEM_REQUIRED_FIELD,
                "'nodes' is not a list of node groups.",
                "Describe the nodes as a JSON list of objects.",
            )
    elif uses_library(system.description_format, ruleset):
        source = f"mlperf-logging {library.version()} (training {ruleset})"
        _require(found, desc, library_required_fields(ruleset), [], source)
        as_text = {}
        for name in LIBRARY_TEXT_FIELDS:
            if name in desc and not isinstance(desc[name], str):
                found.error(
                    rule_catalogue.SYSTEM_INVALID_FIELD,
                    f"The system description's {name!r} is {_shown(desc[name])}, "
                    f"not text; {source} reads it as text.",
                    f'Write it as a JSON string, e.g. "{name}": "8".',
                )
                as_text[name] = json.dumps(desc[name])
        _, reasons = _library_check({**desc, **as_text}, ruleset)
        for reason in reasons:
            if reason.startswith(_MISSING):
                continue
            if reason.startswith(_STATUS) and library.ruleset_tuple(ruleset) < STATUS_RULE_FROM:
                found.warning(
                    rule_catalogue.SYSTEM_INVALID_FIELD,
                    f"{reason}.",
                    f"{source} refuses it, but the rule came with ruleset 4.1.0 (the library applies it "
                    "from 4.0.0 on): this round's own tools accepted the status values its submitters used "
                    "('onprem', 'cloud', 'available'). A warning for reviewers, not an error.",
                )
                continue
            found.error(
                rule_catalogue.SYSTEM_INVALID_FIELD, f"{reason}.", f"Use a value {source} accepts."
            )
    else:
        spec = rules()["system_json"]
        _require(
            found,
            desc,
            spec["required"],
            spec.get("expected", []),
            f"training {ruleset} system.json",
        )
    _check_values(found, desc, system.description_format)


def _check_values(found: Findings, desc: dict, description_format: str) -> None:
    """Counts that are no counts (NaN, Infinity, negative, fractional, huge, words) are errors: the system's
    accelerator count and everything computed from it would be wrong. Texts too long for the table are cut."""
    for problem in descriptions.value_problems(desc, description_format):
        value = _shown(problem.value)
        if problem.rule == rule_catalogue.SYSTEM_NUMBER:
            found.error(
                problem.rule,
                f"The system description's {problem.where!r} is {value}: {problem.why}, "
                "so it is not taken as a count.",
                f'Write a whole number from 0 to {descriptions.MAX_COUNT:,}, e.g. "8".',
            )
        else:
            limit = descriptions.FIELD_CHARS[problem.where]
            found.warning(
                problem.rule,
                f"The system's {problem.where.replace('_', ' ')} read from the description "
                f"is {problem.why}; it is shown cut to {limit} characters.",
                "Keep names short; put details in the notes fields.",
            )


def _shown(value, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "…"


def _require(found: Findings, desc: dict, required, expected, source: str, where: str = "") -> None:
    place = f" in {where}" if where else ""
    missing = [name for name in required if name not in desc]
    for name in missing[:MAX_LISTED]:
        found.error(
            rule_catalogue.SYSTEM_REQUIRED_FIELD,
            f"The system description has no {name!r} field{place}.",
            f"Add it: {source} requires it.",
        )
    if len(missing) > MAX_LISTED:
        rest = ", ".join(missing[MAX_LISTED:])
        found.error(
            rule_catalogue.SYSTEM_REQUIRED_FIELD,
            f"The system description lacks {len(missing) - MAX_LISTED} more "
            f"required fields{place}: {rest}.",
            f"Add them: {source} requires them.",
        )
    for name in expected:
        if name not in desc:
            found.warning(
                rule_catalogue.SYSTEM_EXPECTED_FIELD,
                f"The system description has no {name!r} field{place}.",
                f"Add it: {source} descriptions carry it.",
            )
