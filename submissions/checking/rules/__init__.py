"""The round's rules as Findings: check_run (one log), check_result (a result folder), rcp_check, check_system,
check_speed (a scored result against the fastest of its accelerator family).

Pure Python (no Django): the pipeline's Celery tasks, pages and commands call these. Checks
return findings, they do not raise. mlperf-logging is used for the rulesets it knows (0.6.0
on; see compliance.py and rcp.py for how it is run safely); v0.5 is checked from v05.toml.
"""

from .findings import (
    Finding,
    Findings,
    ResultContext,
    RunContext,
    RunFacts,
    RunOutcome,
    SystemFacts,
)
from .mlperf.rcp import compare_scaling, normalisation, rcp_check, score_factor
from .plausibility import check_speed
from .result import check_result, no_score, result_over_budget, result_rcp
from .run import check_run
from .systems import check_system

__all__ = [
    "Finding",
    "Findings",
    "ResultContext",
    "RunContext",
    "RunFacts",
    "RunOutcome",
    "SystemFacts",
    "check_result",
    "check_run",
    "check_speed",
    "check_system",
    "compare_scaling",
    "no_score",
    "normalisation",
    "result_over_budget",
    "rcp_check",
    "score_factor",
    "result_rcp",
]
