"""Findings in a reader's words: a one-line summary of a result's findings and each finding's message
without the checker's rule expressions.

The submitter's report (the submission page, `manage.py report`, its JSON) keeps the checker's exact
wording, rule expressions included: that is what a submitter fixes a log with. A reader of a public
page needs to know what was found and whether it matters, not `v['value'] >= 0.72 and ...`. Pure
functions over the plain dicts that leaderboard.panels hands out.
"""

import re
from collections import Counter

from django.utils.translation import gettext, gettext_noop, ngettext, pgettext

from . import rule_catalogue

# What each kind of finding means, in a phrase that completes "the checks found ...": the rule catalogue's
# phrases; a rule without one falls back on its family (the part before the dot), then on a general phrase.
PHRASES = rule_catalogue.PHRASES
FAMILIES = rule_catalogue.FAMILIES
_SEVERITY_WORDS = {"error": ("error", "errors"), "warning": ("warning", "warnings")}
_SEVERITY = {
    "error": gettext_noop("error"),
    "warning": gettext_noop("warning"),
    "info": gettext_noop("info"),
}
# Findings that say nothing about a result's number and stay on the submission's report and the reviewers'
# pages (the rule catalogue says which).
NOT_FOR_READERS = rule_catalogue.NOT_FOR_READERS
# Reference-check verdicts that change how a result's number should be read.
# leaderboard.statuses.ReferenceCheckVerdict.IMPLAUSIBLY_FAST, spelt here: the catalogue's tables import
# no model choices (tests/test_architecture.py).
DISPUTED_VERDICTS = {"implausibly-fast"}


def reader_flags(
    score_s: float | None, score_message: str, not_public: str, checks: list[dict]
) -> list[str]:
    """What a reader must know before reading a result's number, in words ('' findings of logging style do
    not count): held or otherwise not public, not scored, or disputed by its latest reference check."""
    flags = []
    if not_public:
        flags.append(gettext("not public: %(why)s") % {"why": not_public})
    if score_s is None:
        flags.append(gettext("not scored: %(why)s") % {"why": score_message or gettext("no score")})
    latest = next((c for c in checks if c.get("verdict")), None)
    if latest and latest["verdict"] in DISPUTED_VERDICTS:
        flags.append(
            gettext("the reference check disputes it (%(verdict)s)")
            % {"verdict": latest.get("verdict_label") or latest["verdict"]}
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
    "EXACTLY_ONE": gettext_noop("exactly once"),
    "AT_LEAST_ONE": gettext_noop("at least once"),
    "AT_LEAST_ONE_OR": gettext_noop("at least once"),
}


def phrase(rule_id: str) -> str:
    """What a finding of this rule is about, in a reader's words and the page's language."""
    return gettext(rule_catalogue.phrase(rule_id))


def severity_word(word: str) -> str:
    """A finding's severity in the page's language ('' and unknown words as they are)."""
    return gettext(_SEVERITY[word]) if word in _SEVERITY else word


_VERDICTS = {"valid": gettext_noop("valid"), "invalid": gettext_noop("invalid")}


def verdict_word(word: str) -> str:
    """A validation's verdict in the page's language ('' and unknown words as they are)."""
    return gettext(_VERDICTS[word]) if word in _VERDICTS else word


def translated(text) -> str:
    """`text` in the page's language where the catalogue has it whole (a rule's phrase, a fixed hint),
    with the rule catalogue's note on imported history translated on its own; else as it is: a finding's
    message names files, lines and values and is kept in the words the checks stored."""
    if not text or not isinstance(text, str):
        return text
    head, hint = text, ""
    if text.endswith(rule_catalogue.HISTORY_HINT):
        head, hint = text[: -len(rule_catalogue.HISTORY_HINT)], rule_catalogue.HISTORY_HINT.strip()
    out = gettext(head) if head else head
    return f"{out} {gettext(hint)}".strip() if hint else out


def summary(findings: list[dict], advisory: bool = False) -> str:
    """One line in plain words, e.g. 'The checks found 3 warnings: runs that did not finish successfully
    (2) and log lines that do not follow MLPerf's logging rules (1). None of them holds the result back.'"""
    counted = [f for f in findings if f.get("severity") in _SEVERITY_WORDS]
    if not counted:
        notes = len(findings)
        if notes:
            return ngettext(
                "The checks passed, with %(n)d note.", "The checks passed, with %(n)d notes.", notes
            ) % {"n": notes}
        return gettext("The checks found nothing to report.")
    severities = Counter(f["severity"] for f in counted)
    words = {
        "error": lambda n: ngettext("%(n)d error", "%(n)d errors", n) % {"n": n},
        "warning": lambda n: ngettext("%(n)d warning", "%(n)d warnings", n) % {"n": n},
    }
    counts = _and([words[s](severities[s]) for s in ("error", "warning") if severities[s]])
    kinds = Counter(phrase(f.get("rule", "")) for f in counted)
    listed = [f"{kind} ({n})" for kind, n in kinds.most_common(3)]
    if len(kinds) > 3:
        others = len(kinds) - 3
        listed.append(ngettext("%(n)d other kind", "%(n)d other kinds", others) % {"n": others})
    what = _and(listed)
    if severities["error"] and advisory:
        verdict = gettext(
            "They were recorded on a past round's published result, which stands as published."
        )
    elif severities["error"]:
        verdict = gettext("The errors hold the result back.")
    else:
        verdict = gettext("None of them holds the result back.")
    return gettext("The checks found %(counts)s: %(what)s. %(verdict)s") % {
        "counts": counts,
        "what": what,
        "verdict": verdict,
    }


def _and(items: list[str]) -> str:
    """'a', 'a and b', 'a, b and c' in the page's language."""
    if len(items) == 1:
        return items[0]
    return gettext("%(list)s and %(last)s") % {
        "list": pgettext("between items of a list", ", ").join(items[:-1]),
        "last": items[-1],
    }


def reader_message(message: str) -> str:
    """A finding's message without rule expressions: the checker's requirement in words where it is one
    the portal knows, else the message with each quoted expression replaced by 'a rule'."""
    text = message.strip()
    m = _REQUIRED.match(text)
    if m:
        keys = pgettext("between log keys", " or ").join(m["keys"].split(" or "))
        wanted = gettext(_REQUIREMENTS.get(m["req"], gettext_noop("as the rules say")))
        found = m["n"]
        if found is None:
            return gettext(
                "The rules want %(keys)s logged %(wanted)s; the log does not have it."
            ) % {"keys": keys, "wanted": wanted}
        times = ngettext("once", "%(n)s times", int(found)) % {"n": found}
        return gettext("The rules want %(keys)s logged %(wanted)s; the log has it %(times)s.") % {
            "keys": keys,
            "wanted": wanted,
            "times": times,
        }
    m = _FAILED_CHECKS.match(text)
    if m:
        return gettext(
            "No '%(key)s' line of the log meets the rule for it "
            "(for an eval metric: no evaluation reaches the range the rules set)."
        ) % {"key": m["key"]}
    text = _quoted(text)
    if _EXPRESSION.search(text):  # an expression left unquoted: say only what the line is about
        head = re.split(r"[:(]", text, maxsplit=1)[0].strip()
        return gettext("%(what)s: a rule of MLPerf's log checker is not met.") % {"what": head}
    return translated(text)


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
    return "" if _EXPRESSION.search(text) else translated(text.strip())


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
