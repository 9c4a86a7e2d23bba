"""The pipeline's steps around the pure domain code: ingest → check each run → finalize.

Each step takes ids, claims its work with a conditional UPDATE (or a unique row) so that a
retried or duplicated task does nothing twice, and leaves the database in a state the next
step, a page or the sweeper can read. Tasks in tasks.py only call these and queue the next.
"""

from .checks import check_runs
from .common import fail, is_disk_full, step_budget
from .finalize import finalize, score_result
from .ingest import ingest, over_budget, revalidate, wait_for_disk
from .publication import held_results, publish, publish_due_rounds, publish_round, withdraw
from .retention import purge_failed_bundles
from .sweeper import count_failed_task, sweep, wait_for_broker

__all__ = [
    "check_runs",
    "count_failed_task",
    "fail",
    "finalize",
    "held_results",
    "is_disk_full",
    "ingest",
    "over_budget",
    "publish",
    "publish_due_rounds",
    "publish_round",
    "purge_failed_bundles",
    "revalidate",
    "score_result",
    "step_budget",
    "sweep",
    "wait_for_broker",
    "wait_for_disk",
    "withdraw",
]
