"""Where the portal's verdict departs from mlperf-logging's tools (package_checker, the compliance checker, the
result summarizer, the system description checker) on purpose: each rule of the portal's own, and why.

docs/divergences.md is this list for people (a test keeps the two the same); the submission page shows the
entries whose rules a submission's findings carry, so reviewers see where the two verdicts can differ.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from leaderboard.catalogue import rule_catalogue


@dataclass(frozen=True)
class Divergence:
    rule: str
    portal: str  # what the portal does
    why: str  # why it departs from mlperf-logging


DIVERGENCES = {
    d.rule: d
    for d in (
        Divergence(
            rule_catalogue.RUN_CLOCK_BACKWARDS,
            "A record between run_start and run_stop in the file but timed outside them: in a live round an error that fails the run where the log's work records prove a moved clock, else a warning; in imported history a warning beside the published score.",
            "mlperf-logging reads only the two times. Real logs go on after run_stop (MiniGo, Stable "
            "Diffusion, Habana's BERT), so only a provable forgery fails a run.",
        ),
        Divergence(
            rule_catalogue.RUN_RECORD_AFTER_STOP,
            "The eval that produced the result logged after run_stop: in a live round an error where the work records prove a moved run_stop, else a warning; in imported history a warning.",
            "As run.clock-backwards: MiniGo and Stable Diffusion evaluate after run_stop by design.",
        ),
        Divergence(
            rule_catalogue.RUN_RECORD_BEFORE_START,
            "The eval that produced the result logged before run_start: in a live round an error where the work records prove a moved run_start, else a warning; in imported history a warning.",
            "As run.clock-backwards.",
        ),
        Divergence(
            rule_catalogue.RUN_STOP_TOO_EARLY,
            "Work logged in the timed region at more than 10x the fastest step rate of the published rounds: in a live round an error that fails the run; in imported history a warning beside the published score.",
            "A squeezed clock agrees with itself; only the pace gives it away. No real run of the shared "
            "rounds comes near it.",
        ),
        Divergence(
            rule_catalogue.RUN_CLOCK_OUTLIER,
            "A record hours from both its neighbours: in a live round an error that fails the run; in imported history a warning beside the published score.",
            "A record edited or copied from another log; mlperf-logging does not look.",
        ),
        Divergence(
            rule_catalogue.RUN_CLOCK_NOT_FINITE,
            "A time that is not a finite number: in a live round an error; in imported history a warning; either way the run has no time.",
            "mlperf-logging would compute a time to train of NaN or infinity.",
        ),
        Divergence(
            rule_catalogue.RUN_CLOCK_UNORDERED,
            "The clock going back within the timed region: a warning.",
            "The time to train stands; a log pieced together from several outputs shows like this.",
        ),
        Divergence(
            rule_catalogue.RUN_QUALITY_TARGET,
            "The last eval_accuracy must reach the round's target: an error that fails the run.",
            "The checker asks for one eval line that reaches it. No run of the shared rounds reaches it and "
            "then falls back while the checker passes it.",
        ),
        Divergence(
            rule_catalogue.RUN_BENCHMARK_KEY,
            "A log naming a benchmark outside the round: an error; the checker is not run on it.",
            "The checker would choose its rules by the logged name (a path it executes).",
        ),
        Divergence(
            rule_catalogue.RUN_BENCHMARK_MISMATCH,
            "A log naming another benchmark than its folder: an error.",
            "The checker picks its rules by the logged name; the portal by the folder's, and says so.",
        ),
        Divergence(
            rule_catalogue.RUN_NO_INIT_STOP,
            "The round file asks for init_stop before run_start (v0.6): an error that fails the run.",
            "A rule of that round's file; today's 0.6.0 checker is not the round's verdict (mlperf.compliance).",
        ),
        Divergence(
            rule_catalogue.RUN_INIT_ORDER,
            "run_start before init_stop where the round file asks for that order: an error.",
            "As run.no-init-stop.",
        ),
        Divergence(
            rule_catalogue.RUN_LINE_TOO_LONG,
            "A log line over the size limit: an error when it holds an event (not read), else a warning.",
            "The portal's input limit; mlperf-logging reads any line.",
        ),
        Divergence(
            rule_catalogue.RUN_BINARY_CONTENT,
            "A file holding binary data: an error; the checker is not run on it.",
            "The portal's input limit.",
        ),
        Divergence(
            rule_catalogue.MLPERF_COMPLIANCE,
            "The checker's errors fail the run from ruleset 1.0.0 on; before it (0.6.0) they are warnings. In "
            "imported history an error about how metadata is logged only (a key missing or under another name, a "
            "submission_* key logged twice, weights_initialization's tensors) is a warning beside the published "
            "score; one about the timed region, the quality target or the run count still fails the run.",
            "Today's 0.6.0 rules refuse 190 of the 430 published v0.6 runs that the round's own tools "
            "accepted; package_checker checks rulesets from 1.0.0 on. Today's rules also refuse published runs "
            "for their metadata alone (issue 38: 76 of 186 results of one round not in shared, NVIDIA's BERT, ResNet, "
            "MiniGo, UNet3D and DLRM among them), and v4.0's BERT rules want opt_lamb_epsilon where earlier "
            "rounds logged opt_epsilon.",
        ),
        Divergence(
            rule_catalogue.MLPERF_TIME_IN_SECONDS,
            "A record that gives time_s (seconds) instead of time_ms is read, with a warning.",
            "mlperf-logging's parser raises on it, and its summarizer with it.",
        ),
        Divergence(
            rule_catalogue.SYSTEM_INVALID_FIELD,
            "A status value of ruleset 4.0.0 or earlier that today's checker refuses is a warning.",
            "The list of status values is a rule of 4.1.0; the library applies it from 4.0.0 on, refusing 79 "
            "of the 97 published v4.0 descriptions.",
        ),
        Divergence(
            rule_catalogue.SYSTEM_DIVISION_MISMATCH,
            "Logs and system description naming different divisions: an error.",
            "mlperf-logging reads the division from the description only.",
        ),
        Divergence(
            rule_catalogue.SYSTEM_CATEGORY_MISMATCH,
            "Logs and system description naming different availability: a warning.",
            "mlperf-logging reads the availability from the description only.",
        ),
        Divergence(
            rule_catalogue.RESULT_HYPERPARAMETERS_EQUAL,
            "Runs of one result with different hyperparameters: a warning, an error only where the round file "
            "makes it blocking.",
            "mlperf-logging does not compare runs with each other.",
        ),
        Divergence(
            rule_catalogue.RESULT_SEEDS_DISTINCT,
            "Runs of one result with the same seed: an error from ruleset 1.0.0 on, in both divisions; runs "
            "that log no seed: a warning.",
            "package_checker's seed checker checks the closed division only, and refuses a run that logs no "
            "seed, which MLCommons published (Habana's v1.0 BERT).",
        ),
        Divergence(
            rule_catalogue.RESULT_IMPLAUSIBLY_FAST,
            "A result faster per accelerator than its family ever was, by more than 3x: a warning.",
            "A plausibility check of the portal's; the GPU reference checks measure what it guesses.",
        ),
    )
}


def present(rules: Iterable[str]) -> list[tuple[Divergence, int]]:
    """The divergences whose rules appear in `rules` (one entry per finding), with how many findings carry
    each, in the order of DIVERGENCES."""
    counts = Counter(rules)
    return [(d, counts[rule]) for rule, d in DIVERGENCES.items() if counts[rule]]
