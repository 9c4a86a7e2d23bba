"""Findings in plain words on public pages, the checker's own wording kept for the submitter."""

from leaderboard.catalogue import findings_words

EXPRESSION = "v['value'] >= 0.72 and v['value'] < 1.0"


def test_a_readers_message_has_no_rule_expression():
    for message in (
        f"Failed checks for eval_accuracy : {EXPRESSION} (no line satisfies it).",
        f"The log line for 'eval_accuracy' fails the rule `{EXPRESSION}`.",
        f"A rule could not be evaluated on this line: `{EXPRESSION}` (a value is missing).",
    ):
        plain = findings_words.reader_message(message)
        assert "v['value']" not in plain and "`" not in plain and ">=" not in plain, plain
    assert (
        findings_words.reader_message("Required EXACTLY_ONE occurrence of 'seed' but found 8.")
        == "The rules want 'seed' logged exactly once; the log has it 8 times."
    )


def test_the_summary_is_one_line_of_counts_and_kinds():
    findings = [
        {"severity": "warning", "rule": "run.not-successful"},
        {"severity": "warning", "rule": "run.not-successful"},
        {"severity": "info", "rule": "result.rcp"},
    ]
    assert findings_words.summary(findings) == (
        "The checks found 2 warnings: runs that did not finish successfully (2). "
        "None of them holds the result back."
    )
    assert findings_words.summary([]) == "The checks found nothing to report."
    assert "\n" not in findings_words.summary(findings * 5)
