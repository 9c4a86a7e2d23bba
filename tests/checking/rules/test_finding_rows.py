"""A rule's outcome becomes a Finding row in one way (Finding.from_rule), wherever the pipeline stores it."""

from submissions.checking.rules import Finding as RuleFinding
from submissions.models import Finding


def test_a_rule_s_finding_keeps_its_words_and_takes_its_place():
    found = RuleFinding(
        "error", "run.stop-missing", "No run_stop.", "Rerun it.", "a/result_0.txt", 7
    )
    row = Finding.from_rule(found, default_file="elsewhere", system_key="sys", benchmark="bert")
    assert (row.severity, row.rule, row.message, row.hint) == (
        "error",
        "run.stop-missing",
        "No run_stop.",
        "Rerun it.",
    )
    assert (row.file, row.line, row.system_key, row.benchmark) == (
        "a/result_0.txt",
        7,
        "sys",
        "bert",
    )
    assert row.pk is None  # built, not saved: the pipeline stores its rows in bulk


def test_the_default_file_is_used_only_where_the_rule_named_none():
    found = RuleFinding("warning", "system.field", "Missing.", "", "", None)
    assert Finding.from_rule(found, default_file="systems/x.json").file == "systems/x.json"
    assert Finding.from_rule(found).file == ""
