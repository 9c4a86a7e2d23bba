"""`manage.py round_report --round KEY`: what became of every result of a round's live submissions."""

from collections import Counter

from django.core.management.base import BaseCommand, CommandError

from leaderboard.models import Result, Round
from submissions.checking.pipeline import held_results
from submissions.models import Submission

LIVE = [s for s in Submission.Status if s != Submission.Status.WITHDRAWN]


class Command(BaseCommand):
    help = "Count a round's results (not withdrawn): scored, public, held (with the rules that hold them), not scored."

    def add_arguments(self, parser):
        parser.add_argument("--round", required=True)

    def handle(self, *args, round, **options):
        if not Round.objects.filter(key=round).exists():
            raise CommandError(f"No round {round!r}.")
        submissions = Submission.objects.filter(round__key=round, status__in=LIVE)
        results = Result.objects.filter(system__submission__in=submissions)
        held_by = Counter()
        for submission in submissions:
            for held in held_results(submission):
                held_by[held.finding.rule] += 1
        not_scored = (
            Counter(  # by the rule that failed the runs (scoring.failures_in_words), not its words
                message.split(" Why: ")[-1].split(" (")[0].rstrip(".")
                for message in results.filter(score_s__isnull=True).values_list(
                    "score_message", flat=True
                )
            )
        )
        self.stdout.write(
            f"{round}: {results.count()} results, {results.filter(score_s__isnull=False).count()} scored, "
            f"{results.filter(published=True).count()} public "
            f"({results.filter(published=True, score_s__isnull=True).count()} of them not scored), "
            f"{sum(held_by.values())} held"
        )
        for rule, count in held_by.most_common():
            self.stdout.write(f"  held by {rule}: {count}")
        for reason, count in not_scored.most_common():
            self.stdout.write(f"  not scored: {reason}: {count}")
