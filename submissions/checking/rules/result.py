"""check_result(): the rules about a result as a whole (its runs together, its system, its convergence)."""

from __future__ import annotations

import math
from pathlib import PurePosixPath

from leaderboard.catalogue import rule_catalogue

from ..budget import is_stop
from ..systems import category_of
from . import systems
from .findings import (
    Finding,
    Findings,
    ResultContext,
    RunFacts,
    SystemFacts,
    over_budget_finding,
)
from .mlperf import library, rcp

# Keys some reference implementations log as counters of the run, not settings (AMD's v5.1
# llama31_8b logs train_samples as the samples trained, different in every run): a difference
# in these is a warning, in any other hyperparameter an error.
COUNTER_KEYS = frozenset(
    {
        "train_samples",
        "eval_samples",
        "max_steps",
        "max_samples",
        "epoch_count",
        "first_epoch_num",
        "init_checkpoint_step",
    }
)
SEEDS_MUST_DIFFER_FROM = (
    1,
    0,
    0,
)  # mlperf-logging's seed checker; earlier rounds reused seeds freely
_NO_SEED = {"", "none", "null", "nan", "n/a"}


def check_result(
    ctx: ResultContext,
    runs: list[RunFacts],
    system: SystemFacts,
    *,
    include_system: bool = True,
    include_rcp: bool = True,
) -> list:
    """Findings for one result folder. include_system=False leaves out the system description's own
    findings (call systems.check_system once per system instead of once per result); include_rcp=False
    leaves out the RCP check (call result_rcp for its findings and factor)."""
    found = Findings(ctx.result_path)
    try:
        _check_run_count(ctx, runs, found)
        _check_seeds(ctx, runs, found)
        # A check of the portal's own, which mlperf-logging's checkers for the rulesets do not make: a warning for
        # reviewers unless the round file lists it in blocking_rules (rule_catalogue.BLOCKABLE_RULES).
        blocking = rule_catalogue.RESULT_HYPERPARAMETERS_EQUAL in ctx.blocking_rules
        _check_hyperparameters(runs, found, blocking=blocking)
        _check_division_and_category(runs, system, found)
    except Exception as exc:
        _crashed(found, exc, "Checking the result's runs against each other")
    if include_system:
        found.extend(systems.check_system(system, ctx.ruleset))
    if include_rcp:
        found.extend(result_rcp(ctx, runs, system)[0])
    return list(found)


def result_rcp(
    ctx: ResultContext, runs: list[RunFacts], system: SystemFacts
) -> tuple[list, float | None]:
    """The RCP check of a closed-division result: (findings, the library's factor or None when none was
    computed). rcp.normalisation turns the factor into the one the score is multiplied by."""
    division = (system.division or ctx.division or "").lower()
    if (
        ctx.result_dir is None
        or division != "closed"
        or not rcp.applies(ctx.ruleset, ctx.benchmark)
    ):
        return [], None
    readings = {_rcp_name(run): run.convergence for run in runs if run.convergence}
    try:
        return rcp.rcp_check(
            ctx.result_dir,
            ctx.ruleset,
            ctx.benchmark,
            result_path=ctx.result_path,
            readings=readings,
        )
    except Exception as exc:
        found = Findings(ctx.result_path)
        _crashed(found, exc, "The RCP check")
        return list(found), None


def _crashed(found: Findings, exc: Exception, what: str) -> None:
    """An exception the checks did not expect is an error finding on the result, not the end of finalize."""
    if is_stop(exc):
        raise exc
    found.error(
        rule_catalogue.RESULT_CHECK_CRASHED,
        f"{what} failed inside the portal ({type(exc).__name__}: {str(exc)[:200]}); "
        "the result's checks are not complete.",
        "A fault in the portal, not necessarily in the bundle: report it to the portal's administrators "
        "with this result folder.",
    )


def _rcp_name(run: RunFacts) -> str:
    """The name the RCP check knows a run by: result_N.txt, as runlogs.result_files presents the folder."""
    return _name(run) if run.index is None else f"result_{run.index}.txt"


def _name(run: RunFacts) -> str:
    return PurePosixPath(run.rel_path).name


def _check_run_count(ctx: ResultContext, runs: list[RunFacts], found: Findings) -> None:
    if len(runs) != ctx.required_runs:
        found.error(
            rule_catalogue.RESULT_RUN_COUNT,
            f"The result has {len(runs)} run{'s' if len(runs) != 1 else ''}; {ctx.benchmark} needs exactly "
            f"{ctx.required_runs} in this round.",
            "Upload one result_N.txt per run, the round's number of runs, in the result folder.",
        )


def _seed_key(seed) -> str | None:
    if seed is None or isinstance(seed, bool):
        return None
    text = str(seed).strip()
    return None if text.lower() in _NO_SEED else text


def _check_seeds(ctx: ResultContext, runs: list[RunFacts], found: Findings) -> None:
    by_seed: dict[str, list[RunFacts]] = {}
    missing = []
    for run in runs:
        key = _seed_key(run.seed)
        if key is None:
            missing.append(run)
        else:
            by_seed.setdefault(key, []).append(run)
    if missing:
        names = ", ".join(_name(r) for r in missing[:5]) + (" ..." if len(missing) > 5 else "")
        found.warning(
            rule_catalogue.RESULT_SEEDS_DISTINCT,
            f"{len(missing)} of {len(runs)} runs log no seed ({names}), so distinct seeds cannot be "
            "checked.",
            "Log the random seed of every run (the `seed` key).",
        )
    severity = (
        "error" if library.ruleset_tuple(ctx.ruleset) >= SEEDS_MUST_DIFFER_FROM else "warning"
    )
    for seed, same in by_seed.items():
        if len(same) > 1:
            names = ", ".join(_name(r) for r in same[:5]) + (" ..." if len(same) > 5 else "")
            found.add(
                severity,
                rule_catalogue.RESULT_SEEDS_DISTINCT,
                f"{len(same)} runs use the same seed {seed[:40]!r}: {names}.",
                "Each run must be started with its own random seed.",
                file=same[1].rel_path,
            )


def _same(a, b) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        if (
            isinstance(a, (int, float))
            and isinstance(b, (int, float))
            and not isinstance(a, bool)
            and not isinstance(b, bool)
        ):
            return math.isclose(a, b, rel_tol=1e-9, abs_tol=0.0) or (
                math.isnan(a) and math.isnan(b)
            )
    return a == b


_ABSENT = object()


def _check_hyperparameters(runs: list[RunFacts], found: Findings, blocking: bool) -> None:
    with_hp = [r for r in runs if r.hyperparameters]
    if len(with_hp) < 2:
        return
    keys = dict.fromkeys(k for r in with_hp for k in r.hyperparameters)
    for key in keys:
        base = next(r for r in with_hp if key in r.hyperparameters)
        for run in with_hp:
            value = run.hyperparameters.get(key, _ABSENT)
            if value is _ABSENT or not _same(base.hyperparameters[key], value):
                shown = "not logged" if value is _ABSENT else repr(value)[:80]
                hint = "All runs of a result must use the same hyperparameters; only the seed may differ."
                if not blocking:
                    hint += (
                        " A check of the portal's own (mlperf-logging does not make it), so a warning for "
                        "reviewers: this round's file does not list it as blocking."
                    )
                found.add(
                    "error" if blocking and key not in COUNTER_KEYS else "warning",
                    rule_catalogue.RESULT_HYPERPARAMETERS_EQUAL,
                    f"Hyperparameter {key!r} is {repr(base.hyperparameters[key])[:80]} in {_name(base)} but "
                    f"{shown} in {_name(run)}.",
                    hint,
                    file=run.rel_path,
                )
                break  # one finding per key


def _check_division_and_category(
    runs: list[RunFacts], system: SystemFacts, found: Findings
) -> None:
    where = system.description_path or "the system description"
    division = (system.division or "").strip().lower()
    odd = [
        (r, str(r.submission.get("division")))
        for r in runs
        if r.submission.get("division")
        and str(r.submission.get("division")).strip().lower() != division
    ]
    if division and odd:
        run, value = odd[0]
        found.error(
            rule_catalogue.SYSTEM_DIVISION_MISMATCH,
            f"{len(odd)} of {len(runs)} logs say submission_division {value[:40]!r} (first: {_name(run)}), "
            f"but {where} says {division!r}.",
            "The division in the logs and in the system description must agree; the rules applied follow "
            "the logs.",
            file=run.rel_path,
        )
    category = (system.category or "").strip().lower()
    if not category or category == "unknown":
        return
    odd = [
        (r, str(r.submission.get("status")))
        for r in runs
        if r.submission.get("status") and category_of(str(r.submission.get("status"))) != category
    ]
    if odd:
        run, value = odd[0]
        found.warning(
            rule_catalogue.SYSTEM_CATEGORY_MISMATCH,
            f"{len(odd)} of {len(runs)} logs say submission_status {value[:40]!r} (first: {_name(run)}), "
            f"but {where} puts the system in category {category!r}.",
            "The system description decides the category; log the same status "
            "(many reference implementations log 'onprem' whatever the system).",
            file=run.rel_path,
        )


def no_score(score_message: str, result_path: str) -> Finding:
    """The error on a result that scoring left without a score; its message says why."""
    return Finding(
        "error",
        rule_catalogue.RESULT_NO_SCORE,
        f"No score: {score_message}",
        "Every result needs the round's number of runs, and at most one may fail.",
        result_path,
    )


def result_over_budget(result_path: str, over) -> Finding:
    """Checking the result's runs together (its RCP check reads their logs) passed a limit of its budget
    (over: budget.OverBudget)."""
    return over_budget_finding(
        rule_catalogue.RESULT_OVER_BUDGET,
        "error",
        "Checking this result's runs together",
        over,
        "the result's checks are not complete.",
        result_path,
    )
