"""JSON read from a bundle, made safe to store and to serve.

Python's json reads NaN and Infinity and writes them back as bare words, which PostgreSQL's jsonb
and every strict JSON reader refuse; values nested hundreds deep pass json's and msgspec's own
limits but not a recursive walk run deeper in the stack. `storable` returns a copy in which non-finite
numbers are the strings "NaN", "Infinity" and "-Infinity" (as leaderboard.models.UploadedJSONField
writes them) and what lies deeper than MAX_DEPTH is left out, and says where it changed anything.
Pure Python: the pipeline stores the copy and turns the changes into findings.
"""

import math

MAX_DEPTH = 32  # levels of lists and objects kept (the logs' deepest hyperparameter has 2)
MAX_LISTED = 10  # changes listed one by one; the rest are counted
TOO_DEEP = "(left out: nested too deep)"


def non_finite_text(value: float) -> str:
    return "NaN" if value != value else ("Infinity" if value > 0 else "-Infinity")


def storable(
    value, where: str = "", max_depth: int = MAX_DEPTH
) -> tuple[object, list[tuple[str, str]]]:
    """(the copy, [(where, what was there)]) for `value`; `where` names each change like `opt_lr[2].beta`."""
    changes: list[tuple[str, str]] = []
    return _copy(value, [where] if where else [], max_depth, changes), changes


def _copy(value, path: list, depth_left: int, changes: list):
    """path: the keys and indexes down to value, formatted only when something changes (most runs: nothing)."""
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        changes.append((_where(path), non_finite_text(value)))
        return non_finite_text(value)
    if not isinstance(value, (dict, list, tuple)):
        return value
    if depth_left <= 0:
        changes.append((_where(path), "a value nested too deep"))
        return TOO_DEEP
    out = {} if isinstance(value, dict) else []
    for key, item in value.items() if isinstance(value, dict) else enumerate(value):
        path.append(key)
        copied = _copy(item, path, depth_left - 1, changes)
        path.pop()
        if isinstance(out, dict):
            out[str(key)] = copied
        else:
            out.append(copied)
    return out


def _where(path: list) -> str:
    text = ""
    for key in path:
        text += f"[{key}]" if isinstance(key, int) else (f".{key}" if text else str(key))
    return text


def describe(changes: list[tuple[str, str]]) -> str:
    """The changes in words, for a finding: `global_batch_size is NaN, eval[3] is Infinity and 2 more`."""
    listed = ", ".join(
        f"{_clip(where) or 'the value'} is {what}" for where, what in changes[:MAX_LISTED]
    )
    more = len(changes) - MAX_LISTED
    return listed + (f" and {more} more" if more > 0 else "")


def _clip(text: str, limit: int = 100) -> str:
    return text if len(text) <= limit else text[:limit] + "…"
