"""`manage.py reference_checks --round KEY [--queue] ...`: a round's reference checks, counted by state and
verdict; with --queue, a new check for each of its results that has none (or, with --again, for all)."""

from collections import Counter

from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from leaderboard.models import Division, Result, Round
from submissions.models import ReferenceCheck
from submissions.refchecks import jobs


class Command(BaseCommand):
    help = (
        "Count a round's reference checks by state and verdict; --queue asks for one for each result "
        "that has none (closed division unless --all-divisions), as staff can from a submission's page."
    )

    def add_arguments(self, parser):
        parser.add_argument("--round", required=True)
        parser.add_argument("--benchmark", help="Only this benchmark's results.")
        parser.add_argument("--queue", action="store_true", help="Queue checks (else only count).")
        parser.add_argument("--again", action="store_true", help="Also results that have a check.")
        parser.add_argument("--all-divisions", action="store_true", help="Open division too.")
        parser.add_argument(
            "--any-agent", action="store_true", help="To any agent (labelled other hardware)."
        )

    def handle(self, *args, round, benchmark, queue, again, all_divisions, any_agent, **options):
        if not Round.objects.filter(key=round).exists():
            raise CommandError(f"No round {round!r}.")
        results = Result.objects.filter(system__round__key=round).order_by("pk")
        if benchmark:
            results = results.filter(benchmark__key=benchmark)
        if queue:
            wanted = results
            if not all_divisions:
                wanted = wanted.filter(system__division=Division.CLOSED)
            if not again:
                wanted = wanted.filter(reference_checks__isnull=True)
            planned = Counter()
            for result in wanted:
                with transaction.atomic():  # each sent once it is stored
                    check = jobs.plan(
                        result, reason="queued from the command line", any_agent=any_agent
                    )
                planned[check.verdict or check.queue] += 1
            self.stdout.write(
                f"queued {sum(planned.values())} checks: "
                + (", ".join(f"{n} {what}" for what, n in sorted(planned.items())) or "none")
            )
        queues = jobs.online_queues()
        checks = ReferenceCheck.objects.filter(result__in=results)
        by_state = Counter(jobs.state_label(c, queues) for c in checks.select_related("agent"))
        by_verdict = Counter(checks.exclude(verdict="").values_list("verdict", flat=True))
        self.stdout.write(
            f"{round}: {checks.count()} reference checks of {results.count()} results"
        )
        for label, n in sorted(by_state.items()):
            self.stdout.write(f"  {n:6d}  {label}")
        for verdict, n in sorted(by_verdict.items()):
            self.stdout.write(f"  {n:6d}  verdict {verdict}")
