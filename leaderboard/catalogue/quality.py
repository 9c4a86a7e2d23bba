"""The quality target in words: which metric a benchmark's target is on (quality_metrics.toml) and
which way is better, in the active language. Pure but for Django's gettext."""

import functools
import tomllib
from pathlib import Path

from django.utils.translation import gettext

DATA_FILE = Path(__file__).resolve().parent / "quality_metrics.toml"


@functools.cache
def _metrics() -> dict[str, str]:
    with open(DATA_FILE, "rb") as f:
        return tomllib.load(f).get("metrics", {})


def metric_of(benchmark_key: str) -> str:
    """The metric the benchmark's target is on, '' where the file does not say."""
    return _metrics().get(benchmark_key, "")


def target_text(benchmark_key: str, target: float | None, higher_is_better: bool) -> str:
    """'log perplexity (C4 validation) of 5.6 or lower (lower is better)'; '' without a target."""
    if target is None:
        return ""
    metric = metric_of(benchmark_key) or gettext("quality")
    if higher_is_better:
        text = gettext("%(metric)s of %(target)s or higher (higher is better)")
    else:
        text = gettext("%(metric)s of %(target)s or lower (lower is better)")
    return text % {"metric": metric, "target": f"{target:g}"}
