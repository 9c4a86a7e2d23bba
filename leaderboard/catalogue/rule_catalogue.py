"""The rule catalogue: every rule id the checks make, declared once, with what it means.

Each rule says its family (the part of the id before the dot), the most severe finding it makes in a live
round and in imported history, whether its error fails a run (the score counts that run as infinitely slow),
and the phrase a reader sees for it. The lists other modules use are derived here: the run rules that fail a
run (`FAILING_RULES`), the rules ingest finds and a re-validation carries over (`INGEST_RULES`), the portal's
own checks (`PORTAL_OWN_RULES`), the rules a round file may make blocking (`BLOCKABLE_RULES`), the readers'
phrases (`PHRASES`, `FAMILIES`) and the rules readers are not shown (`NOT_FOR_READERS`).

A check of the portal's own (one mlperf-logging's checkers do not make) never fails a run in imported history:
MLCommons published that run, so the finding is a warning shown beside the published score (DESIGN.md,
"Trust"). In a live round it keeps its severity and may fail the run.

Pure Python, no Django: the write side's domain imports it (the checks), and so does the read side (pages).
The readers' phrases and the history note are marked for the translation catalogue (gettext_noop below) and
kept in English here, as findings are stored; the read side shows them in the page's language
(leaderboard/catalogue/findings_words.py).
"""

from __future__ import annotations

from dataclasses import dataclass

ERROR, WARNING, INFO = "error", "warning", "info"


def gettext_noop(text: str) -> str:
    """Marks a phrase for the catalogue (Django's makemessages finds this name) and returns it as it is."""
    return text


_RANK = {INFO: 0, WARNING: 1, ERROR: 2}


@dataclass(frozen=True)
class Rule:
    id: str
    live: str  # the most severe finding it makes in a live round: "error" | "warning" | "info"
    history: str = ""  # ... in imported history ('' = as live)
    fails_run: bool = (
        False  # its error means the run did not converge or its time cannot be trusted
    )
    portal_own: bool = (
        False  # a check of the portal's own, which mlperf-logging's checkers do not make
    )
    ingest: bool = (
        False  # found when ingest reads the bundle's files: carried over to a re-validation
    )
    blockable: bool = False  # a warning unless the round file lists it in blocking_rules
    phrase: str = ""  # what it found, completing "the checks found ..." ('' = its family's phrase)
    for_readers: bool = (
        True  # shown on public pages (else on the submission's report and reviewers' pages)
    )

    @property
    def family(self) -> str:
        return self.id.partition(".")[0]

    @property
    def in_history(self) -> str:
        return self.history or self.live

    @property
    def fails_run_in_history(self) -> bool:
        return self.fails_run and self.in_history == ERROR


def _own(rule_id: str, phrase: str, *, fails_run: bool = True) -> Rule:
    """A check of the portal's own that is an error in a live round: in history, a warning that fails nothing."""
    return Rule(rule_id, ERROR, WARNING, fails_run=fails_run, portal_own=True, phrase=phrase)


# What each family of rules is about, for a rule without a phrase of its own.
FAMILIES = {
    "run": gettext_noop("issues in a run log"),
    "result": gettext_noop("issues with the result's runs"),
    "bundle": gettext_noop("issues with the bundle's files"),
    "layout": gettext_noop("issues with the bundle's folders"),
    "system": gettext_noop("issues with the system description"),
    "mlperf": gettext_noop("issues found by MLPerf's log checker"),
    "v05": gettext_noop("issues with the v0.5 log format"),
    "power": gettext_noop("issues with the power logs"),
    "pipeline": gettext_noop("issues in the portal's processing"),
    "internal": gettext_noop("faults of the portal"),
}

RULES: tuple[Rule, ...] = (
    # A run log (submissions/checking/rules/run.py, clock.py, prescan).
    Rule("run.line-too-long", ERROR),  # an error when the line holds a log event, else a warning
    Rule("run.binary-content", ERROR),
    Rule("run.not-utf8", WARNING, phrase=gettext_noop("log lines that are not plain text")),
    Rule("run.bad-line", WARNING),
    Rule("run.no-run-start", ERROR),
    Rule("run.no-run-stop", ERROR, phrase=gettext_noop("run logs that end before the run stopped")),
    Rule("run.stop-before-start", ERROR),
    Rule("run.not-successful", ERROR, phrase=gettext_noop("runs that did not finish successfully")),
    Rule("run.no-init-stop", ERROR),
    Rule("run.init-order", ERROR),
    Rule("run.quality-target", ERROR, fails_run=True),
    Rule("run.multiple-runs", ERROR, fails_run=True),
    Rule("run.benchmark-key", ERROR),
    Rule("run.benchmark-mismatch", ERROR),
    _own("run.clock-not-finite", gettext_noop("records whose time is not a number")),
    _own("run.clock-outlier", gettext_noop("records timed off the run's clock")),
    _own("run.clock-backwards", gettext_noop("records of the timed region timed outside it")),
    _own(
        "run.record-after-stop",
        gettext_noop("an eval that produced the result logged after run_stop"),
    ),
    _own(
        "run.record-before-start",
        gettext_noop("an eval that produced the result logged before run_start"),
    ),
    _own(
        "run.stop-too-early", gettext_noop("a run faster than any system of the published rounds")
    ),
    Rule(
        "run.clock-unordered",
        WARNING,
        portal_own=True,
        phrase=gettext_noop("run logs whose clock goes backwards"),
    ),
    Rule("run.timeout", ERROR),
    Rule("run.unreadable", ERROR),
    Rule("run.check-crashed", ERROR),
    Rule(
        "run.over-budget", ERROR
    ),  # checking the log passed its step's memory or CPU (checking/budget.py)
    Rule("run.stored-as-text", WARNING),
    # mlperf-logging's checker, as the portal runs it (compliance.py, library.py).
    # In history its errors about how metadata is logged only are warnings (compliance.metadata_only): the rule
    # still makes errors there, about the timed region, the quality target or the run count.
    Rule(
        "mlperf.compliance",
        ERROR,
        phrase=gettext_noop("log lines that do not follow MLPerf's logging rules"),
    ),
    Rule(
        "mlperf.config-missing",
        WARNING,
        phrase=gettext_noop("logs whose rules the checker does not have"),
    ),
    Rule("mlperf.output", INFO, phrase=gettext_noop("remarks of MLPerf's log checker")),
    Rule("mlperf.skipped", INFO),
    Rule("mlperf.unavailable", WARNING),
    Rule("mlperf.unsupported-ruleset", INFO),
    Rule("mlperf.time-in-seconds", WARNING),
    # v0.5's data-driven rules (v05.py, v05.toml).
    Rule("v05.unknown-benchmark", INFO),
    Rule("v05.required-tag", ERROR),
    Rule("v05.expected-tag", WARNING),
    Rule("v05.unknown-tag", INFO, phrase=gettext_noop("log tags that the v0.5 rules do not know")),
    Rule("v05.order", ERROR, phrase=gettext_noop("log events out of the expected order")),
    Rule("v05.eval-target", WARNING),
    # A result's runs together (result.py, rcp.py, plausibility.py).
    Rule(
        "result.run-count",
        ERROR,
        phrase=gettext_noop("a number of runs other than the rules require"),
    ),
    Rule(
        "result.seeds-distinct",
        ERROR,
        phrase=gettext_noop("runs whose random seeds cannot be told apart"),
    ),
    Rule(
        "result.hyperparameters-equal",
        ERROR,  # a warning unless the round file makes it blocking
        WARNING,
        portal_own=True,
        blockable=True,
        phrase=gettext_noop("runs with different hyperparameters"),
    ),
    Rule(
        "result.rcp",
        ERROR,
        phrase=gettext_noop("convergence compared with MLPerf's reference points"),
    ),
    Rule(
        "result.rcp-scaling",
        WARNING,
        phrase=gettext_noop("a scaling factor in the bundle that differs from the portal's"),
    ),
    Rule("result.no-score", ERROR, phrase=gettext_noop("no score that can be computed")),
    Rule("result.implausibly-fast", WARNING, portal_own=True),
    Rule("result.check-crashed", WARNING),
    Rule("result.over-budget", ERROR),
    # System descriptions (rules/systems.py, checking/systems.py, result.py).
    Rule("system.required-field", ERROR),
    Rule(
        "system.expected-field",
        WARNING,
        phrase=gettext_noop("a system description with a field missing"),
    ),
    Rule("system.invalid-field", ERROR),
    Rule("system.number", ERROR),
    Rule("system.long-text", WARNING),
    Rule("system.division-mismatch", ERROR),
    Rule(
        "system.category-mismatch",
        WARNING,
        phrase=gettext_noop("logs and system description that disagree on the category"),
        # Reference implementations log 'onprem' whatever the system: every cloud result carried it.
        for_readers=False,
    ),
    Rule("system.check-crashed", WARNING),
    # Where a bundle puts its files (rules/bundle.py), read at ingest.
    Rule("bundle.log-name", WARNING, ingest=True),
    Rule("bundle.log-place", WARNING, ingest=True),
    Rule("bundle.no-run-log", ERROR, ingest=True, phrase=gettext_noop("a missing run log")),
    Rule("bundle.run-index", WARNING, ingest=True),
    Rule("bundle.json-too-deep", ERROR, ingest=True),
    Rule("bundle.json-number", ERROR, ingest=True),
    Rule("bundle.json-too-large", ERROR, ingest=True),
    Rule("bundle.scaling-factor", WARNING, ingest=True),
    Rule("bundle.other-organisation", ERROR),
    Rule("internal.read", ERROR, ingest=True),
    # A bundle refused whole (bundles/unpack.py, limits.py, layout.py): the submission's failure, no finding.
    Rule("bundle.absolute-path", ERROR),
    Rule("bundle.bad-path", ERROR),
    Rule("bundle.empty", ERROR),
    Rule("bundle.file-too-large", ERROR),
    Rule("bundle.link", ERROR),
    Rule("bundle.name-too-long", ERROR),
    Rule("bundle.not-an-archive", ERROR),
    Rule("bundle.path-too-deep", ERROR),
    Rule("bundle.path-too-long", ERROR),
    Rule("bundle.path-traversal", ERROR),
    Rule("bundle.ratio", ERROR),
    Rule("bundle.special-file", ERROR),
    Rule("bundle.too-large", ERROR),
    Rule("bundle.too-many-files", ERROR),
    Rule("bundle.over-budget", ERROR),  # opening it passed its step's memory, CPU or time
    Rule("bundle.truncated", ERROR),
    Rule("bundle.unsupported", ERROR),
    Rule("layout.multiple-submitters", ERROR),
    Rule("layout.no-benchmarks", ERROR),
    Rule("layout.no-results", ERROR),
    Rule("pipeline.gave-up", ERROR),
    # Power logs (rules/power.py): a bad power log costs the energy score, never the time score.
    *(
        Rule(f"power.{name}", WARNING)
        for name in (
            "no-logs",
            "node-missing",
            "node-number",
            "unreadable-reading",
            "negative-reading",
            "absurd-reading",
            "no-start",
            "clock",
            "window-not-covered",
            "gap",
            "no-switch-estimate",
            "stop-at-start",
            "unreadable-file",
            "check-crashed",
            "over-budget",
        )
    ),
)

CATALOGUE: dict[str, Rule] = {rule.id: rule for rule in RULES}
if len(CATALOGUE) != len(RULES):
    raise ValueError("a rule id is declared twice in the rule catalogue")

FAILING_RULES = tuple(rule.id for rule in RULES if rule.fails_run)
INGEST_RULES = tuple(rule.id for rule in RULES if rule.ingest)
PORTAL_OWN_RULES = frozenset(rule.id for rule in RULES if rule.portal_own)
BLOCKABLE_RULES = frozenset(rule.id for rule in RULES if rule.blockable)
PHRASES = {rule.id: rule.phrase for rule in RULES if rule.phrase}
NOT_FOR_READERS = frozenset(rule.id for rule in RULES if not rule.for_readers)

HISTORY_HINT = " " + gettext_noop(
    "Imported history: a check of the portal's own, which mlperf-logging's checker of this ruleset does not "
    "make; MLCommons published this run, so its time counts and this finding is shown beside the score."
)


def severity(rule_id: str, severity: str, *, history: bool) -> str:
    """The severity a finding of `rule_id` made as `severity` has: in history, no more than the rule's
    severity there (a portal-own error becomes a warning); in a live round, as made."""
    rule = CATALOGUE.get(rule_id)
    if not history or rule is None or _RANK[severity] <= _RANK[rule.in_history]:
        return severity
    return rule.in_history


def fails_run(rule_id: str, *, history: bool = False) -> bool:
    """Whether an error of this rule fails the run it is about (in history: only rules that are no checks of
    the portal's own)."""
    rule = CATALOGUE.get(rule_id)
    if rule is None:
        return False
    return rule.fails_run_in_history if history else rule.fails_run


def phrase(rule_id: str) -> str:
    """What a finding of this rule is about, in a reader's words."""
    return PHRASES.get(rule_id) or FAMILIES.get(
        rule_id.partition(".")[0], gettext_noop("other issues")
    )
