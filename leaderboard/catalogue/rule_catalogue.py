"""The rule catalogue: every rule id the checks make, declared once, with what it means.

Each rule says its family (the part of the id before the dot), the most severe finding it makes in a live
round and in imported history, whether its error fails a run (the score counts that run as infinitely slow),
and the phrase a reader sees for it. Other modules name a rule by its constant here, the id in capitals
(`rule_catalogue.RUN_CLOCK_OUTLIER` for "run.clock-outlier"), never by the id as a string
(tests/leaderboard/test_rule_catalogue.py fails on one). The lists they use are derived here: the run rules
that fail a run (`FAILING_RULES`; the portal's own among them, its clock's: `UNTIMED_RULES`), the rules
ingest finds and a re-validation carries over (`INGEST_RULES`), the portal's own checks (`PORTAL_OWN_RULES`),
the rules a round file may make blocking (`BLOCKABLE_RULES`), the readers' phrases (`PHRASES`, `FAMILIES`)
and the rules readers are not shown (`NOT_FOR_READERS`).

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


_DECLARED: list[Rule] = []


def _rule(rule_id: str, live: str, history: str = "", **facts) -> str:
    """Declare a rule (a row of RULES) and give back its id, which the other modules name by the constant it is
    assigned to: the id in capitals, '.' and '-' as '_' (rule_catalogue.RUN_CLOCK_OUTLIER)."""
    _DECLARED.append(Rule(rule_id, live, history, **facts))
    return rule_id


def _own(rule_id: str, phrase: str, *, fails_run: bool = True) -> str:
    """A check of the portal's own that is an error in a live round: in history, a warning that fails nothing."""
    return _rule(rule_id, ERROR, WARNING, fails_run=fails_run, portal_own=True, phrase=phrase)


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

# A run log (submissions/checking/rules/run.py, clock.py, prescan).
# An error when the line holds a log event, else a warning.
RUN_LINE_TOO_LONG = _rule("run.line-too-long", ERROR)
RUN_BINARY_CONTENT = _rule("run.binary-content", ERROR)
RUN_NOT_UTF8 = _rule(
    "run.not-utf8", WARNING, phrase=gettext_noop("log lines that are not plain text")
)
RUN_BAD_LINE = _rule("run.bad-line", WARNING)
RUN_NO_RUN_START = _rule("run.no-run-start", ERROR)
RUN_NO_RUN_STOP = _rule(
    "run.no-run-stop", ERROR, phrase=gettext_noop("run logs that end before the run stopped")
)
RUN_STOP_BEFORE_START = _rule("run.stop-before-start", ERROR)
RUN_NOT_SUCCESSFUL = _rule(
    "run.not-successful", ERROR, phrase=gettext_noop("runs that did not finish successfully")
)
RUN_NO_INIT_STOP = _rule("run.no-init-stop", ERROR)
RUN_INIT_ORDER = _rule("run.init-order", ERROR)
RUN_QUALITY_TARGET = _rule("run.quality-target", ERROR, fails_run=True)
RUN_MULTIPLE_RUNS = _rule("run.multiple-runs", ERROR, fails_run=True)
RUN_BENCHMARK_KEY = _rule("run.benchmark-key", ERROR)
RUN_BENCHMARK_MISMATCH = _rule("run.benchmark-mismatch", ERROR)
RUN_CLOCK_NOT_FINITE = _own(
    "run.clock-not-finite", gettext_noop("records whose time is not a number")
)
RUN_CLOCK_OUTLIER = _own("run.clock-outlier", gettext_noop("records timed off the run's clock"))
RUN_CLOCK_BACKWARDS = _own(
    "run.clock-backwards", gettext_noop("records of the timed region timed outside it")
)
RUN_RECORD_AFTER_STOP = _own(
    "run.record-after-stop",
    gettext_noop("an eval that produced the result logged after run_stop"),
)
RUN_RECORD_BEFORE_START = _own(
    "run.record-before-start",
    gettext_noop("an eval that produced the result logged before run_start"),
)
RUN_STOP_TOO_EARLY = _own(
    "run.stop-too-early", gettext_noop("a run faster than any system of the published rounds")
)
RUN_CLOCK_UNORDERED = _rule(
    "run.clock-unordered",
    WARNING,
    portal_own=True,
    phrase=gettext_noop("run logs whose clock goes backwards"),
)
RUN_TIMEOUT = _rule("run.timeout", ERROR)
RUN_UNREADABLE = _rule("run.unreadable", ERROR)
RUN_CHECK_CRASHED = _rule("run.check-crashed", ERROR)
# Checking the log passed its step's memory or CPU (checking/budget.py).
RUN_OVER_BUDGET = _rule("run.over-budget", ERROR)
RUN_STORED_AS_TEXT = _rule("run.stored-as-text", WARNING)
# mlperf-logging's checker, as the portal runs it (compliance.py, library.py).
# In history its errors about how metadata is logged only are warnings (compliance.metadata_only): the rule
# still makes errors there, about the timed region, the quality target or the run count.
MLPERF_COMPLIANCE = _rule(
    "mlperf.compliance",
    ERROR,
    phrase=gettext_noop("log lines that do not follow MLPerf's logging rules"),
)
MLPERF_CONFIG_MISSING = _rule(
    "mlperf.config-missing",
    WARNING,
    phrase=gettext_noop("logs whose rules the checker does not have"),
)
MLPERF_OUTPUT = _rule("mlperf.output", INFO, phrase=gettext_noop("remarks of MLPerf's log checker"))
MLPERF_SKIPPED = _rule("mlperf.skipped", INFO)
MLPERF_UNAVAILABLE = _rule("mlperf.unavailable", WARNING)
MLPERF_UNSUPPORTED_RULESET = _rule("mlperf.unsupported-ruleset", INFO)
MLPERF_TIME_IN_SECONDS = _rule("mlperf.time-in-seconds", WARNING)
# v0.5's data-driven rules (v05.py, v05.toml).
V05_UNKNOWN_BENCHMARK = _rule("v05.unknown-benchmark", INFO)
V05_REQUIRED_TAG = _rule("v05.required-tag", ERROR)
V05_EXPECTED_TAG = _rule("v05.expected-tag", WARNING)
V05_UNKNOWN_TAG = _rule(
    "v05.unknown-tag", INFO, phrase=gettext_noop("log tags that the v0.5 rules do not know")
)
V05_ORDER = _rule("v05.order", ERROR, phrase=gettext_noop("log events out of the expected order"))
V05_EVAL_TARGET = _rule("v05.eval-target", WARNING)
# A result's runs together (result.py, rcp.py, plausibility.py).
RESULT_RUN_COUNT = _rule(
    "result.run-count",
    ERROR,
    phrase=gettext_noop("a number of runs other than the rules require"),
)
RESULT_SEEDS_DISTINCT = _rule(
    "result.seeds-distinct",
    ERROR,
    phrase=gettext_noop("runs whose random seeds cannot be told apart"),
)
RESULT_HYPERPARAMETERS_EQUAL = _rule(
    "result.hyperparameters-equal",
    ERROR,  # a warning unless the round file makes it blocking
    WARNING,
    portal_own=True,
    blockable=True,
    phrase=gettext_noop("runs with different hyperparameters"),
)
RESULT_RCP = _rule(
    "result.rcp",
    ERROR,
    phrase=gettext_noop("convergence compared with MLPerf's reference points"),
)
RESULT_RCP_SCALING = _rule(
    "result.rcp-scaling",
    WARNING,
    phrase=gettext_noop("a scaling factor in the bundle that differs from the portal's"),
)
RESULT_NO_SCORE = _rule(
    "result.no-score", ERROR, phrase=gettext_noop("no score that can be computed")
)
RESULT_IMPLAUSIBLY_FAST = _rule("result.implausibly-fast", WARNING, portal_own=True)
RESULT_CHECK_CRASHED = _rule("result.check-crashed", WARNING)
RESULT_OVER_BUDGET = _rule("result.over-budget", ERROR)
# System descriptions (rules/systems.py, checking/systems.py, result.py).
SYSTEM_REQUIRED_FIELD = _rule("system.required-field", ERROR)
SYSTEM_EXPECTED_FIELD = _rule(
    "system.expected-field",
    WARNING,
    phrase=gettext_noop("a system description with a field missing"),
)
SYSTEM_INVALID_FIELD = _rule("system.invalid-field", ERROR)
SYSTEM_NUMBER = _rule("system.number", ERROR)
SYSTEM_LONG_TEXT = _rule("system.long-text", WARNING)
SYSTEM_DIVISION_MISMATCH = _rule("system.division-mismatch", ERROR)
SYSTEM_CATEGORY_MISMATCH = _rule(
    "system.category-mismatch",
    WARNING,
    phrase=gettext_noop("logs and system description that disagree on the category"),
    # Reference implementations log 'onprem' whatever the system: every cloud result carried it.
    for_readers=False,
)
SYSTEM_CHECK_CRASHED = _rule("system.check-crashed", WARNING)
# Where a bundle puts its files (rules/bundle.py), read at ingest.
# A run log in its benchmark folder, not named result_N.txt.
BUNDLE_LOG_NAME = _rule("bundle.log-name", WARNING, ingest=True)
# A run log outside a benchmark folder (directly in the system folder).
BUNDLE_LOG_PLACE = _rule("bundle.log-place", WARNING, ingest=True)
# A benchmark folder with no file that holds MLPerf log lines.
BUNDLE_NO_RUN_LOG = _rule(
    "bundle.no-run-log", ERROR, ingest=True, phrase=gettext_noop("a missing run log")
)
# result_N.txt read as another run than N: N too long, or taken by another log.
BUNDLE_RUN_INDEX = _rule("bundle.run-index", WARNING, ingest=True)
# A description or scaling.json nested deeper than it can be read.
BUNDLE_JSON_TOO_DEEP = _rule("bundle.json-too-deep", ERROR, ingest=True)
# A JSON file with an integer longer than json reads.
BUNDLE_JSON_NUMBER = _rule("bundle.json-number", ERROR, ingest=True)
# A description or scaling.json larger than any such file needs.
BUNDLE_JSON_TOO_LARGE = _rule("bundle.json-too-large", ERROR, ingest=True)
# scaling.json's factor is no positive finite number.
BUNDLE_SCALING_FACTOR = _rule("bundle.scaling-factor", WARNING, ingest=True)
# The submitter folder names another organisation.
BUNDLE_OTHER_ORGANISATION = _rule("bundle.other-organisation", ERROR)
# Reading a file raised what the reader did not expect: the portal's fault.
INTERNAL_READ = _rule("internal.read", ERROR, ingest=True)
# A bundle refused whole (bundles/unpack.py, limits.py, layout.py): the submission's failure, no finding.
BUNDLE_ABSOLUTE_PATH = _rule("bundle.absolute-path", ERROR)
BUNDLE_BAD_PATH = _rule("bundle.bad-path", ERROR)
BUNDLE_EMPTY = _rule("bundle.empty", ERROR)
BUNDLE_FILE_TOO_LARGE = _rule("bundle.file-too-large", ERROR)
BUNDLE_LINK = _rule("bundle.link", ERROR)
BUNDLE_NAME_TOO_LONG = _rule("bundle.name-too-long", ERROR)
BUNDLE_NOT_AN_ARCHIVE = _rule("bundle.not-an-archive", ERROR)
BUNDLE_PATH_TOO_DEEP = _rule("bundle.path-too-deep", ERROR)
BUNDLE_PATH_TOO_LONG = _rule("bundle.path-too-long", ERROR)
BUNDLE_PATH_TRAVERSAL = _rule("bundle.path-traversal", ERROR)
BUNDLE_RATIO = _rule("bundle.ratio", ERROR)
BUNDLE_SPECIAL_FILE = _rule("bundle.special-file", ERROR)
BUNDLE_TOO_LARGE = _rule("bundle.too-large", ERROR)
BUNDLE_TOO_MANY_FILES = _rule("bundle.too-many-files", ERROR)
# Opening the bundle passed a limit of its step's budget (memory, CPU or time: checking/budget.py).
BUNDLE_OVER_BUDGET = _rule("bundle.over-budget", ERROR)
BUNDLE_TRUNCATED = _rule("bundle.truncated", ERROR)
BUNDLE_UNSUPPORTED = _rule("bundle.unsupported", ERROR)
LAYOUT_MULTIPLE_SUBMITTERS = _rule("layout.multiple-submitters", ERROR)
LAYOUT_NO_BENCHMARKS = _rule("layout.no-benchmarks", ERROR)
LAYOUT_NO_RESULTS = _rule("layout.no-results", ERROR)
PIPELINE_GAVE_UP = _rule("pipeline.gave-up", ERROR)
# Power logs (rules/power.py): a bad power log costs the energy score, never the time score.
POWER_NO_LOGS = _rule("power.no-logs", WARNING)
POWER_NODE_MISSING = _rule("power.node-missing", WARNING)
POWER_NODE_NUMBER = _rule("power.node-number", WARNING)
POWER_UNREADABLE_READING = _rule("power.unreadable-reading", WARNING)
POWER_NEGATIVE_READING = _rule("power.negative-reading", WARNING)
POWER_ABSURD_READING = _rule("power.absurd-reading", WARNING)
POWER_NO_START = _rule("power.no-start", WARNING)
POWER_CLOCK = _rule("power.clock", WARNING)
POWER_WINDOW_NOT_COVERED = _rule("power.window-not-covered", WARNING)
POWER_GAP = _rule("power.gap", WARNING)
POWER_NO_SWITCH_ESTIMATE = _rule("power.no-switch-estimate", WARNING)
POWER_STOP_AT_START = _rule("power.stop-at-start", WARNING)
POWER_UNREADABLE_FILE = _rule("power.unreadable-file", WARNING)
POWER_CHECK_CRASHED = _rule("power.check-crashed", WARNING)
POWER_OVER_BUDGET = _rule("power.over-budget", WARNING)

RULES: tuple[Rule, ...] = tuple(_DECLARED)

CATALOGUE: dict[str, Rule] = {rule.id: rule for rule in RULES}
if len(CATALOGUE) != len(RULES):
    raise ValueError("a rule id is declared twice in the rule catalogue")

FAILING_RULES = tuple(rule.id for rule in RULES if rule.fails_run)
# Of those, the portal's own (its clock's): the logged time to train cannot be trusted.
UNTIMED_RULES = tuple(rule.id for rule in RULES if rule.fails_run and rule.portal_own)
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
