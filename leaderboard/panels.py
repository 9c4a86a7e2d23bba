"""What the write side adds to a public result page, without leaderboard importing it.

The result page shows a result's findings. They live in the `submissions` app, which
`leaderboard` must not import; so `submissions` registers a provider here (in its
AppConfig.ready):

    from leaderboard import panels
    panels.register_findings(lambda result_ids: {...})  # {result id: [dict, ...]}

A provider takes result ids (a list, or a query of them that it reads as a subquery) and returns, per
id, a list of plain dicts: findings
with severity, rule, file, line, message, hint, advisory. One call per page, so a provider
can answer with one query. Reference checks come the same way (register_reference_checks):
dicts with state_label, family, measured_on, measured, implied, ratio, tolerance, verdict,
verdict_label, message, probe (what the probe ran), as submissions/refchecks/jobs.py makes them.

The log viewer reads a run's log from the stored bundle the same way: `submissions` registers
a provider that takes (submission id, bundle name, bundle-relative path) and returns a callable
opening the file for binary reading, or None when the bundle no longer holds it.
"""

from collections import defaultdict
from collections.abc import Callable

Provider = Callable[[list[int]], dict[int, list[dict]]]
LogProvider = Callable[[int, str, str], Callable | None]
_findings: list[Provider] = []
_logs: list[LogProvider] = []
_reference_checks: list[Provider] = []


def register_findings(provider: Provider) -> None:
    if provider not in _findings:
        _findings.append(provider)


def register_logs(provider: LogProvider) -> None:
    if provider not in _logs:
        _logs.append(provider)


def log_opener(submission_id: int, bundle_name: str, path: str) -> Callable | None:
    """A callable opening the run log at `path` of the submission's stored bundle, or None."""
    for provider in _logs:
        found = provider(submission_id, bundle_name, path)
        if found is not None:
            return found
    return None


def register_reference_checks(provider: Provider) -> None:
    if provider not in _reference_checks:
        _reference_checks.append(provider)


def _collect(providers: list[Provider], result_ids) -> dict[int, list[dict]]:
    """Every provider's items per result id; an id with none reads as [] (`result_ids` is not read here:
    a query of a round's ids stays a subquery of the provider's one query)."""
    out: dict[int, list[dict]] = defaultdict(list)
    for provider in providers:
        for result_id, items in (provider(result_ids) or {}).items():
            out.setdefault(result_id, []).extend(items)
    return out


def findings(result_ids: list[int]) -> dict[int, list[dict]]:
    return _collect(_findings, result_ids)


def reference_checks(result_ids: list[int]) -> dict[int, list[dict]]:
    return _collect(_reference_checks, result_ids)


def registered() -> dict[str, bool]:
    return {
        "findings": bool(_findings),
        "reference_checks": bool(_reference_checks),
        "logs": bool(_logs),
    }
