"""The rule catalogue (issue 38, item 3): every rule id the code uses is declared once in
leaderboard/catalogue/rule_catalogue.py, and the lists other modules use are read from it."""

import re

import pytest

from leaderboard.catalogue import findings_words, rounds, rule_catalogue
from submissions.checking.rules import bundle, clock, result, run

from ..conftest import ROOT

# Where rule ids are written: the apps' Python and the rules' data files.
SOURCES = ("submissions", "leaderboard", "portal", "accounts", "audit", "agent", "clients")
FAMILIES = "|".join(rule_catalogue.FAMILIES)
RULE_SHAPED = re.compile(rf"""["']((?:{FAMILIES})\.[a-z0-9]+(?:-[a-z0-9]+)*)["']""")
# Literals of a rule's shape that are not rule ids, and what they are.
NOT_RULES = {
    "system.json": "a file name",
    "bundle.tar": "a file name",
    "v05.toml": "a file name",
    "result.withdrawn": "an audit event",
    "system.category": "a serializer's source field",
    "system.division": "a serializer's source field",
    "system.key": "a serializer's source field",
    "system.uid": "a serializer's source field",
    "system.name": "a serializer's source field",
}


def rule_shaped_literals() -> dict[str, set[str]]:
    """{literal: files} of every quoted string of a rule id's shape in the apps' .py and .toml files (the
    catalogue's own module left out)."""
    found: dict[str, set[str]] = {}
    for top in SOURCES:
        for path in (ROOT / top).rglob("*"):
            if path.suffix not in (".py", ".toml") or "migrations" in path.parts:
                continue
            if path.name == "rule_catalogue.py":
                continue
            for literal in RULE_SHAPED.findall(path.read_text()):
                found.setdefault(literal, set()).add(str(path.relative_to(ROOT)))
    return found


def test_every_rule_id_in_the_code_is_in_the_catalogue():
    literals = rule_shaped_literals()
    missing = {
        literal: sorted(files)
        for literal, files in literals.items()
        if literal not in rule_catalogue.CATALOGUE and literal not in NOT_RULES
    }
    assert not missing, f"rule ids the catalogue lacks: {missing}"
    # Nothing declared that no code makes, and no stale exception.
    assert set(rule_catalogue.CATALOGUE) <= set(literals)
    assert set(NOT_RULES) <= set(literals)


def test_the_scan_finds_a_rule_id_the_catalogue_lacks(tmp_path):
    text = 'found.error("run.made-up-rule", "m")\nNAME = "system.json"\n'
    assert RULE_SHAPED.findall(text) == ["run.made-up-rule", "system.json"]
    assert "run.made-up-rule" not in rule_catalogue.CATALOGUE


def test_each_rule_is_declared_once_with_a_known_family_and_severities():
    ids = [rule.id for rule in rule_catalogue.RULES]
    assert len(ids) == len(set(ids)) == len(rule_catalogue.CATALOGUE)
    for rule in rule_catalogue.RULES:
        assert rule.family in rule_catalogue.FAMILIES, rule.id
        assert {rule.live, rule.in_history} <= {"error", "warning", "info"}, rule.id
        assert not rule.fails_run or rule.live == "error", rule.id


def test_the_lists_of_the_checks_and_pages_are_read_from_the_catalogue():
    assert run.FAILING_RULES == rule_catalogue.FAILING_RULES
    assert set(clock.UNTIMED_RULES) | {"run.quality-target", "run.multiple-runs"} == set(
        rule_catalogue.FAILING_RULES
    )
    assert bundle.INGEST_RULES == rule_catalogue.INGEST_RULES
    assert result.PORTAL_OWN_RULES == rule_catalogue.PORTAL_OWN_RULES
    assert findings_words.PHRASES == rule_catalogue.PHRASES
    assert findings_words.NOT_FOR_READERS == rule_catalogue.NOT_FOR_READERS
    assert findings_words.phrase("run.clock-outlier") == "records timed off the run's clock"
    assert findings_words.phrase("power.gap") == "issues with the power logs"  # its family's phrase


def test_in_history_no_check_of_the_portals_own_fails_a_run():
    for rule in rule_catalogue.RULES:
        if rule.portal_own:
            assert rule.in_history != "error" and not rule.fails_run_in_history, rule.id
            assert not rule_catalogue.fails_run(rule.id, history=True), rule.id
    assert rule_catalogue.fails_run("run.clock-outlier")  # live: it fails the run
    assert rule_catalogue.severity("run.clock-outlier", "error", history=True) == "warning"
    assert rule_catalogue.severity("run.clock-outlier", "error", history=False) == "error"
    # Rules of mlperf-logging's own keep their severity in history.
    assert rule_catalogue.fails_run("run.quality-target", history=True)
    assert rule_catalogue.severity("mlperf.compliance", "error", history=True) == "error"


def test_a_round_file_may_make_blocking_only_what_the_catalogue_lets_it():
    assert rounds.read_blocking_rules(
        {"blocking_rules": ["result.hyperparameters-equal"]}, "x.toml"
    ) == ["result.hyperparameters-equal"]
    with pytest.raises(ValueError, match="blocking_rules lists run.no-such-rule"):
        rounds.read_blocking_rules({"blocking_rules": ["run.no-such-rule"]}, "x.toml")
    with pytest.raises(ValueError, match="a list of rule ids"):
        rounds.read_blocking_rules({"blocking_rules": "result.hyperparameters-equal"}, "x.toml")
    for path in rounds.ROUNDS_DIR.glob("*.toml"):
        rounds.read_round_file(path)  # the shipped rounds pass
