"""The portal's verdicts next to mlperf-logging's, on the shared rounds, ingested by a real worker (issue 25).

For each round mlperf-logging has rules for (v0.6, v1.0, v4.0, v5.1; it has none for 0.5.0):
- every run its result summarizer counts (the compliance checker passes the log, which parses and has run_start
  and run_stop: `_read_result_file` and `_query_run_start_stop`, run here on a copy of the round) is a
  successful run in the portal;
- each submitter's verdict, the portal's next to package_checker's (run here on the copy): where they differ,
  the portal's errors are rules of docs/divergences.md, or package_checker's reasons are ones the portal judges
  otherwise on purpose (EXPLAINED: the submission's findings carry that divergence), or package_checker crashed
  (no verdict).

Runs on PostgreSQL and Redis; one round at a time (v1.0 and v4.0 are about 600 MB unpacked each).
"""

import contextlib
import io
import logging
import tarfile
from collections import Counter

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from leaderboard.models import Run
from submissions.checking.rules import compliance
from submissions.checking.rules.divergences import DIVERGENCES
from submissions.models import Finding, Submission

from .conftest import round_param, shared_tarball
from .worker import media, media_root, worker  # noqa: F401 (fixtures)

pytestmark = [pytest.mark.services, pytest.mark.shared_rounds]

ROUNDS = [
    round_param("training-v0.6", "training_v0.6_results.tar.xz", "0.6.0"),
    round_param("training-v1.0", "training_v1.0_results.tar.xz", "1.0.0"),
    round_param("training-v4.0", "training_v4.0_results.tar.xz", "4.0.0"),
    round_param("training-v5.1", "training_v5.1_results.tar.xz", "5.1.0"),
]
# package_checker's reasons the portal judges otherwise on purpose (docs/divergences.md), by the rule it makes
# a warning of instead: today's status values on older rulesets, runs that log no seed.
EXPLAINED = {
    "Field status contains a non valid value": "system.invalid-field",
    "logs no seed": "result.seeds-distinct",
    "Seed checker failed": "result.seeds-distinct",
}


def explained(reason: str, ruleset: str, found: set[str]) -> bool:
    """A reason of package_checker's that a divergence explains: its rule is among the submission's findings
    (see EXPLAINED); before 1.0.0 its compliance verdicts too (mlperf.compliance)."""
    if any(p in reason and rule in found and rule in DIVERGENCES for p, rule in EXPLAINED.items()):
        return True
    return not compliance.gives_verdict(ruleset) and "do not comply" in reason


@contextlib.contextmanager
def quiet():
    """mlperf-logging logs every rule it applies, and prints."""
    previous = logging.root.manager.disable
    logging.disable(logging.CRITICAL)
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            yield
    finally:
        logging.disable(previous)


def summarizer_counts(path, ruleset: str) -> bool | None:
    from mlperf_logging.result_summarizer import result_summarizer as summarizer

    try:
        with quiet():
            summarizer._query_run_start_stop(
                summarizer._read_result_file(str(path), "training", ruleset)
            )
    except ValueError:  # what the summarizer catches: it drops the run
        return False
    except Exception:  # the summarizer crashes on it (Google's v0.6 logs name "mask": no mask.yaml)
        return None
    return True


def package_verdict(folder, ruleset: str) -> tuple[bool | None, list[str]]:
    """(passes, its error lines) from package_checker's own checks of one submitter's folder; passes is None
    where it crashed."""
    from mlperf_logging.package_checker import package_checker

    records = []

    class Keep(logging.Handler):
        def emit(self, record):
            if record.levelno >= logging.ERROR:
                records.append(record.getMessage())

    root = logging.getLogger()
    saved, level = root.handlers[:], root.level
    root.handlers[:], root.level = [Keep()], logging.INFO
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            systems_ok = (
                package_checker.check_systems(str(folder), "training", ruleset)
                if ruleset >= "1.0.0"
                else True
            )
            results_ok = package_checker.check_training_result_files(
                str(folder), "training", ruleset, True, False, False, None, False
            )
        return systems_ok and results_ok, records
    except Exception as exc:
        return None, [f"{type(exc).__name__}: {exc}"]
    finally:
        root.handlers[:], root.level = saved, level


def test_mlperf_logging_has_no_rules_for_v05():
    assert not compliance.supports("0.5.0")


@pytest.mark.parametrize("key, tarball, ruleset", ROUNDS)
def test_the_portal_next_to_mlperf_logging(rounds, worker, tmp_path, key, tarball, ruleset):
    copy = tmp_path / "round"
    with tarfile.open(shared_tarball(tarball), "r|xz") as tar:
        tar.extractall(copy, filter="data")
    with contextlib.suppress(CommandError):  # an invalid submission is a verdict, not a failed test
        call_command(
            "ingest", str(shared_tarball(tarball)), "--round", key, "--wait", "--timeout", "1800"
        )

    runs = Run.objects.filter(result__system__round__key=key).select_related("result")
    counted = lost = crashed = 0
    wrong = []
    for run in runs:
        verdict = summarizer_counts(copy / run.path, ruleset)
        crashed += verdict is None
        if not verdict:
            continue
        counted += 1
        if not run.success:
            lost += 1
            wrong.append((run.path, run.failure_reason))
    print(
        f"{key}: {runs.count()} runs, {counted} counted by the summarizer, {lost} of them failed in the portal"
    )
    assert counted > 0
    assert wrong == [], wrong[:10]

    table, unexplained = [], []
    for submission in Submission.objects.filter(round__key=key).order_by("pk"):
        first = (
            Run.objects.filter(result__system__submission=submission)
            .values_list("path", flat=True)
            .first()
        )
        if first is None:
            continue
        submitter = first.split("/")[0]
        passes, reasons = package_verdict(copy / submitter, ruleset)
        portal = submission.status == Submission.Status.VALID
        errors = Counter(
            Finding.objects.filter(validation__submission=submission, severity="error").values_list(
                "rule", flat=True
            )
        )
        table.append((submitter, portal, passes, dict(errors)))
        if passes is None or passes == portal:
            continue
        if passes and not portal:  # the portal is stricter: only by rules of its own
            own = set(errors) - set(DIVERGENCES)
            if own:
                unexplained.append((submitter, "portal errors", sorted(own)))
        else:  # package_checker is stricter: only by rules of another time
            found = set(
                Finding.objects.filter(validation__submission=submission).values_list(
                    "rule", flat=True
                )
            )
            other = [r for r in reasons if not explained(r, ruleset, found)]
            if other:
                unexplained.append((submitter, "package_checker", other[:5]))
    agree = sum(1 for _, portal, passes, _ in table if passes is not None and passes == portal)
    judged = sum(1 for _, _, passes, _ in table if passes is not None)
    print(
        f"{key}: verdicts agree for {agree} of {judged} submitters package_checker judged ({len(table)} in all)"
    )
    for row in table:
        print("  ", row)
    assert unexplained == [], unexplained
