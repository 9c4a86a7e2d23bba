"""The baseline for benchmarks: mlperf-logging's compliance checker run the plain way, file after file.

This is what its command line does for each file (make_checker, then main -> check_file: its own
reader, a fresh parse of every YAML config, the module-global config queue, the config chosen by
the log's submission_benchmark), without our caching, guards or parallelism. Use it on trusted
logs only: it is exactly as exposed to hostile logs as the command line is.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from submissions.checking.rules.mlperf import compliance, library


def run_mlperf_checker_sequentially(
    paths_with_benchmarks: Iterable[tuple[str | Path, str]],
    ruleset: str,
    verdicts: dict | None = None,
) -> int:
    """Check each (path, benchmark) with mlperf-logging as its CLI would; return how many files it checked.
    `verdicts`, when given, gets {path: whether the checker found the file valid} (a crash: not valid).

    The benchmark only picks the entry config, as `--config` would on the command line (MiniGo
    v0.6 has its own); everything else is the library's. Output is captured, not printed.
    """
    mlp = library.mlp_compliance
    if mlp is None:
        raise RuntimeError("mlperf-logging is not installed")
    checked = 0
    with library.Capture():
        for path, benchmark in paths_with_benchmarks:
            checker = mlp.make_checker(library.USAGE, ruleset, False, False)
            valid = False
            try:
                valid = mlp.main(str(path), compliance.entry_config(ruleset, benchmark), checker)[0]
            except Exception:  # the CLI would die here; the baseline counts the file and goes on
                mlp.enqueued_configs.clear()
            if verdicts is not None:
                verdicts[path] = valid
            checked += 1
    return checked
