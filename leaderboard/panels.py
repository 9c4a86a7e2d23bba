"""What the write side adds to a public result page, without leaderboard importing it.

The result page shows a result's findings. They live in the `submissions` app, which
`leaderboard` must not import; so `submissions` registers a provider here (in its
AppConfig.ready):

    from leaderboard import panels
    panels.register_findings(lambda result_ids: {...})  # {result id: [dict, ...]}

A provider takes a list of result ids and returns, per id, a list of plain dicts: findings
with severity, rule, file, line, message, hint, advisory. One call per page, so a provider
can answer with one query.
"""

from collections.abc import Callable

Provider = Callable[[list[int]], dict[int, list[dict]]]
_findings: list[Provider] = []


def register_findings(provider: Provider) -> None:
    if provider not in _findings:
        _findings.append(provider)


def _collect(providers: list[Provider], result_ids: list[int]) -> dict[int, list[dict]]:
    out: dict[int, list[dict]] = {i: [] for i in result_ids}
    for provider in providers:
        for result_id, items in (provider(result_ids) or {}).items():
            out.setdefault(result_id, []).extend(items)
    return out


def findings(result_ids: list[int]) -> dict[int, list[dict]]:
    return _collect(_findings, result_ids)


def reference_checks(result_ids: list[int]) -> dict[int, list[dict]]:
    """None yet: no part of the write side records a reference check's outcome, so none registers a provider."""
    return {i: [] for i in result_ids}


def registered() -> dict[str, bool]:
    return {"findings": bool(_findings), "reference_checks": False}
