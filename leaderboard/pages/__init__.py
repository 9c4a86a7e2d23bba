"""Public pages: rounds and a round's table (rounds), a system and a result (details), a run's log (logs), a comparison
of systems (compare), progress across rounds (progress) and an organisation across rounds (organisations). Only public results appear
(leaderboard.access.public)."""

from .compare import compare_page
from .details import public_id_page, result_page, system_page
from .logs import run_log, run_log_raw
from .organisations import organisation_page
from .progress import progress_page
from .rounds import home, round_page, rounds_page

__all__ = [
    "compare_page",
    "home",
    "organisation_page",
    "progress_page",
    "public_id_page",
    "result_page",
    "round_page",
    "rounds_page",
    "run_log",
    "run_log_raw",
    "system_page",
]
