"""Findings in a reader's words: a one-line summary of a result's findings and each finding's message
without the checker's rule expressions.

The submitter's report (the submission page, `manage.py report`, its JSON) keeps the checker's exact
wording, rule expressions included: that is what a submitter fixes a log with. A reader of a public
page needs to know what was found and whether it matters, not `v['value'] >= 0.72 and ...`. Pure
functions over the plain dicts that leaderboard.panels hands out.
"""

import re
from collections import Counter

from . import rule_catalogue

# What each kind of finding means, in a phrase that completes "the checks found ...": the rule catalogue's
# phrases; a rule without one falls back on its family (the part before the dot), then on a general phrase.
PHRASES = rule_catalogue.PHRASES
FAMILIES = rule_catalogue.FAMILIES
_SEVERITY_WORDS = {"error": ("error", "errors"), "warning": ("warning", "warnings")}
# Findings that say nothing about a result's number and stay on the submission's report and the reviewers'
# pages (the rule catalogue says which).
NOT_FOR_READERS = rule_catalogue.NOT_FOR_READERS
# Reference-check verdicts that change how a result's number should be read.
DISPUTED_VERDICTS = {"implausibly-fast"}


def reader_flags(
    score_s: float | None, score_message: str, not_public: str, checks: list[dict]
) -> list[str]:
    """What a reader must know before reading a result's number, in words ('' findings of logging style do
    not count): held or otherwise not public, not scored, or disputed by its latest reference check."""
    flags = []
    if not_public:
        flags.append(f"not public: {not_public}")
    if score_s is None:
        flags.append(f"not scored: {score_message or 'no score'}")
    latest = next((c for c in checks if c.get("verdict")), None)
    if latest and latest["verdict"] in DISPUTED_VERDICTS:
        flags.append(
            f"the reference check disputes it ({latest.get('verdict_label') or latest['verdict']})"
        )
    return flags


_CODE = re.compile(r"`[^`]*`")  # the checker's rule expressions, as the portal quotes them
_FAILED_CHECKS = re.compile(r"^Failed checks for (?P<key>[\w.]+)\s*:.*$", re.S)
_REQUIRED = re.compile(
    r"^Required (?P<req>EXACTLY_ONE|AT_LEAST_ONE|AT_LEAST_ONE_OR|\w+) occurrence of "
    r"(?P<keys>'[^']*'(?: or '[^']*')*)(?: but found (?P<n>\d+))?"
)
# What is left of an expression the checker printed without quotes: v['value'], s['x'], ll.value ...
_EXPRESSION = re.compile(r"\b[vs]\[['\"]|\bll\.\w+|\bv\.get\(|\bcurrent_\w+\b|==|>=|<=|!=")
_REQUIREMENTS = {
    "EXACTLY_ONE": "exactly once",
    "AT_LEAST_ONE": "at least once",
    "AT_LEAST_ONE_OR": "at least once",
}


phrase = rule_catalogue.phrase


def summary(findings: list[dict], advisory: bool = False) -> str:
    """One line in plain words, e.g. 'The checks found 3 warnings: runs that did not finish successfully
    (2) and log lines that do not follow MLPerf's logging rules (1). None of them holds the result back.'"""
    counted = [f for f in findings if f.get("severity") in _SEVERITY_WORDS]
    if not counted:
        notes = len(findings)
        if notes:
            return f"The checks passed, with {notes} note{'s' if notes != 1 else ''}."
        return "The checks found nothing to report."
    severities = Counter(f["severity"] for f in counted)
    counts = " and ".join(
        f"{severities[s]} {_SEVERITY_WORDS[s][severities[s] != 1]}"
        for s in ("error", "warning")
        if severities[s]
    )
    kinds = Counter(phrase(f.get("rule", "")) for f in counted)
    listed = [f"{kind} ({n})" for kind, n in kinds.most_common(3)]
    if len(kinds) > 3:
        listed.append(f"{len(kinds) - 3} other kind{'s' if len(kinds) > 4 else ''}")
    what = listed[0] if len(listed) == 1 else ", ".join(listed[:-1]) + " and " + listed[-1]
    if severities["error"] and advisory:
        verdict = (
            "They were recorded on a past round's published result, which stands as published."
        )
    elif severities["error"]:
        verdict = "The errors hold the result back."
    else:
        verdict = "None of them holds the result back."
    return f"The checks found {counts}: {what}. {verdict}"


def reader_message(message: str) -> str:
    """A finding's message without rule expressions: the checker's requirement in words where it is one
    the portal knows, else the message with each quoted expression replaced by 'a rule'."""
    text = message.strip()
    m = _REQUIRED.match(text)
    if m:
        keys = " or ".join(m["keys"].split(" or "))
        wanted = _REQUIREMENTS.get(m["req"], "as the rules say")
        found = m["n"]
        if found is None:
            return f"The rules want {keys} logged {wanted}; the log does not have it."
        times = "once" if found == "1" else f"{found} times"
        return f"The rules want {keys} logged {wanted}; the log has it {times}."
    m = _FAILED_CHECKS.match(text)
    if m:
        return (
            f"No '{m['key']}' line of the log meets the rule for it "
            "(for an eval metric: no evaluation reaches the range the rules set)."
        )
    text = _quoted(text)
    if _EXPRESSION.search(text):  # an expression left unquoted: say only what the line is about
        head = re.split(r"[:(]", text, maxsplit=1)[0].strip()
        return f"{head}: a rule of MLPerf's log checker is not met."
    return text


def _quoted(text: str) -> str:
    text = re.sub(
        r":\s*`[^`]*`", "", text
    )  # "... on this line: `expr` (why)" -> "... on this line (why)"
    text = re.sub(r"\bthe rule\s*`[^`]*`", "a rule of MLPerf's log checker", text)
    return _CODE.sub("a rule", text)


def reader_hint(hint: str) -> str:
    """A finding's hint as a reader sees it: expressions and the checker's version notes taken out."""
    text = _quoted(hint or "")
    text = re.sub(r"\s*\(mlperf-logging [^)]*\)", "", text)
    return "" if _EXPRESSION.search(text) else text.strip()


def for_readers(findings: list[dict]) -> list[dict]:
    """The findings as public pages show them: plain message and hint, what kind of finding it is; those
    of NOT_FOR_READERS left out."""
    return [
        {
            **f,
            "message": reader_message(f.get("message", "")),
            "hint": reader_hint(f.get("hint", "")),
            "kind": phrase(f.get("rule", "")),
        }
        for f in findings
        if f.get("rule") not in NOT_FOR_READERS
    ]
