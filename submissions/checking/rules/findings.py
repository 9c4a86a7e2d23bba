"""Finding (one rule outcome) and the plain facts the checks take: run, result and system contexts."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..logs import RunSummary

ERROR, WARNING, INFO = "error", "warning", "info"
SEVERITIES = (ERROR, WARNING, INFO)


@dataclass(frozen=True)
class Finding:
    severity: str  # "error" | "warning" | "info"
    rule: str  # stable dotted id, e.g. "run.no-run-stop", "mlperf.compliance"
    message: str  # plain words: what is wrong
    hint: str = ""  # what to do about it
    file: str = ""  # bundle-relative path ('' when none)
    line: int | None = None

    def __post_init__(self):
        if self.severity not in SEVERITIES:
            raise ValueError(f"unknown severity {self.severity!r}")

    def as_dict(self) -> dict:
        return asdict(self)


def over_budget_finding(
    rule: str, severity: str, doing: str, over, then: str, path: str
) -> Finding:
    """`doing` (e.g. "Checking this log") passed a limit of its step's budget (over: budget.OverBudget, which
    names it): a finding on `path`, the file it was reading; `then` says what follows for the submission."""
    return Finding(
        severity,
        rule,
        f"{doing} needed {over.text}, a limit the portal sets on reading one file: {then}",
        "Look in this file for what no training run writes: a file or a line far larger than a log, or a "
        "number (in the file or in its name) far larger than any count it stands for.",
        path,
    )


class Findings(list):
    """A list of Finding that knows the file it is about: `found.error(rule, message, hint, line=...)`."""

    def __init__(self, file: str = ""):
        super().__init__()
        self.file = file

    def add(
        self,
        severity: str,
        rule: str,
        message: str,
        hint: str = "",
        *,
        line: int | None = None,
        file: str | None = None,
    ) -> Finding:
        finding = Finding(severity, rule, message, hint, self.file if file is None else file, line)
        self.append(finding)
        return finding

    def error(self, rule: str, message: str, hint: str = "", **where) -> Finding:
        return self.add(ERROR, rule, message, hint, **where)

    def warning(self, rule: str, message: str, hint: str = "", **where) -> Finding:
        return self.add(WARNING, rule, message, hint, **where)

    def info(self, rule: str, message: str, hint: str = "", **where) -> Finding:
        return self.add(INFO, rule, message, hint, **where)

    def has_errors(self) -> bool:
        return any(f.severity == ERROR for f in self)


@dataclass(frozen=True)
class RunContext:
    """What the round says about one run: its ruleset and the benchmark of its result folder."""

    ruleset: str  # "0.5.0", "0.6.0", "5.1.0" ...
    benchmark: str  # the round's benchmark key for the result folder ("maskrcnn" even if the folder is "mask")
    benchmark_keys: frozenset[str]  # all of the round's benchmark keys
    division: str = (
        "closed"  # the system's; the logs' own division picks mlperf-logging's closed/open rules
    )
    quality_target: float | None = None
    higher_is_better: bool = True
    require_init_stop_before_run_start: bool = False
    max_line_bytes: int = (
        64 * 1024
    )  # longer lines are a finding; their file is not given to mlperf-logging
    history: bool = False  # imported history: the portal's own checks fail no run (rule_catalogue)


@dataclass
class RunOutcome:
    summary: RunSummary
    findings: list[Finding]
    convergence: dict | None = None  # rcp.read_run's reading, where the round has RCPs


@dataclass(frozen=True)
class ResultContext:
    """One result folder (system x benchmark) as the round and the system description see it."""

    ruleset: str
    benchmark: str  # the round's benchmark key
    required_runs: int
    result_path: str = ""  # bundle-relative folder, e.g. "NVIDIA/results/dgx_h100/llama31_8b"
    result_dir: Path | dict | None = (
        None  # the folder, or {name: file} of it read in place (for the RCP check)
    )
    division: str = "closed"  # from the system description
    category: str = ""  # category key from the system description ("cloud", "onprem", ...)
    blocking_rules: frozenset = (
        frozenset()
    )  # the portal's own checks that the round file makes blocking


@dataclass(frozen=True)
class RunFacts:
    """What check_run learnt about one run, as the pipeline stores it."""

    rel_path: str
    success: bool = False
    seed: Any = None
    hyperparameters: dict = field(default_factory=dict)
    submission: dict = field(
        default_factory=dict
    )  # benchmark/org/division/status/platform from the log
    first_line: dict = field(default_factory=dict)  # {key: line}, when known
    convergence: dict | None = None  # rcp.read_run's reading, made when the log was checked
    index: int | None = None  # N of the result_N.txt the rules name it, whatever the file is called


@dataclass(frozen=True)
class SystemFacts:
    description: dict
    description_format: str = "system.json"  # "entry.json" (v0.5) | "system.json" (v0.6+)
    description_path: str = ""  # bundle-relative
    division: str = "closed"
    category: str = ""
