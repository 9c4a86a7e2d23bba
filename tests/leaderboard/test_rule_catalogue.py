"""The rule catalogue (issue 38, item 3; issue 35, item 2): every rule id is declared once in
leaderboard/catalogue/rule_catalogue.py, the apps name it by the catalogue's constant and never spell it,
and the lists other modules use are read from it.

The tests spell rule ids as strings where they assert what a finding stored, a report or a page shows: the
id is what submitters, reviewers and the API read, so a renamed id is a change these tests should see."""

import io
import re
import tokenize

import pytest

from leaderboard.catalogue import findings_words, rounds, rule_catalogue

from ..conftest import ROOT

# Where rule ids are written: the apps' Python and the rules' data files.
SOURCES = (
    "submissions",
    "leaderboard",
    "notifications",
    "portal",
    "accounts",
    "audit",
    "agent",
    "clients",
)
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


CATALOGUE_FILE = ROOT / "leaderboard" / "catalogue" / "rule_catalogue.py"


def _app_files(suffixes=(".py", ".toml")):
    """The apps' files of those suffixes, the catalogue's own module and migrations left out."""
    for top in SOURCES:
        for path in sorted((ROOT / top).rglob("*")):
            if (
                path.suffix in suffixes
                and "migrations" not in path.parts
                and path != CATALOGUE_FILE
            ):
                yield path


def rule_shaped_literals() -> dict[str, set[str]]:
    """{literal: files} of every quoted text of a rule id's shape in the apps' .py and .toml files, comments
    and messages included (the catalogue's own module left out)."""
    found: dict[str, set[str]] = {}
    for path in _app_files():
        for literal in RULE_SHAPED.findall(path.read_text()):
            found.setdefault(literal, set()).add(str(path.relative_to(ROOT)))
    return found


def rule_id_strings(source: str) -> list[tuple[int, str]]:
    """(line, id) of each string of Python code whose whole text is a rule id's shape: a rule named by its
    id where the catalogue's constant should name it. Comments, docstrings and messages that mention an id
    among other words are no such string."""
    found = []
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type != tokenize.STRING:
            continue
        text = re.fullmatch(r"""[rRuU]?(["'])(.*)\1""", token.string)
        if text and RULE_SHAPED.fullmatch(f'"{text[2]}"') and text[2] not in NOT_RULES:
            found.append((token.start[0], text[2]))
    return found


def test_every_rule_id_in_the_code_is_in_the_catalogue():
    literals = rule_shaped_literals()
    missing = {
        literal: sorted(files)
        for literal, files in literals.items()
        if literal not in rule_catalogue.CATALOGUE and literal not in NOT_RULES
    }
    assert not missing, f"rule ids the catalogue lacks: {missing}"
    assert set(NOT_RULES) <= set(literals)  # no stale exception


def test_no_module_of_the_apps_spells_a_rule_id():
    """A rule is named by the catalogue's constant (rule_catalogue.RUN_CLOCK_OUTLIER), never by its id as a
    string: a typo in a string makes a rule no list, phrase or severity knows."""
    spelt = [
        f"{path.relative_to(ROOT)}:{line}: {rule_id!r}"
        for path in _app_files((".py",))
        for line, rule_id in rule_id_strings(path.read_text())
    ]
    assert not spelt, "name these rules by the catalogue's constants:\n" + "\n".join(spelt)


def test_the_spelling_check_finds_an_id_as_a_string_and_nothing_else():
    source = (
        'found.error("run.clock-outlier", "m")\n'
        "RULES = {'gap': 'power.gap'}\n"
        '# a comment naming "run.no-run-stop"\n'
        'hint = "See run.no-run-stop."\n'
        'NAME = "system.json"\n'
        'found.error(rule_catalogue.RUN_CLOCK_OUTLIER, "m")\n'
    )
    assert rule_id_strings(source) == [(1, "run.clock-outlier"), (2, "power.gap")]


def test_each_rule_has_its_constant_and_every_constant_is_named_by_the_apps():
    """The constant's name is the id in capitals with '.' and '-' as '_'; a rule no module names is a rule no
    check makes (the catalogue would promise what nothing does)."""
    names = {}
    for rule in rule_catalogue.RULES:
        name = re.sub(r"[.-]", "_", rule.id).upper()
        assert getattr(rule_catalogue, name, None) == rule.id, rule.id
        names[name] = rule.id
    code = "\n".join(path.read_text() for path in _app_files((".py",)))
    named = set(re.findall(r"\brule_catalogue\.([A-Z][A-Z0-9_]*)\b", code))
    assert set(names) - named == set(), "declared, yet no module names them"


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
    assert set(rule_catalogue.UNTIMED_RULES) | {"run.quality-target", "run.multiple-runs"} == set(
        rule_catalogue.FAILING_RULES
    )
    assert set(rule_catalogue.UNTIMED_RULES) == {
        "run.clock-not-finite",
        "run.clock-outlier",
        "run.clock-backwards",
        "run.record-after-stop",
        "run.record-before-start",
        "run.stop-too-early",
    }
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
