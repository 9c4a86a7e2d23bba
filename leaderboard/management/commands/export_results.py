import sys

from django.core.management.base import BaseCommand, CommandError

from leaderboard.models import Round
from leaderboard.roundtable.exports import results_frame, write


class Command(BaseCommand):
    help = "Print every result of a round as CSV or JSON."

    def add_arguments(self, parser):
        parser.add_argument("--round", required=True, help="round key, e.g. training-v5.1")
        parser.add_argument("--format", choices=["csv", "json"], default="csv")
        parser.add_argument(
            "--include-unpublished",
            action="store_true",
            help="also results not yet published (staff use)",
        )

    def handle(self, *args, **options):
        try:
            round_ = Round.objects.get(key=options["round"])
        except Round.DoesNotExist:
            keys = ", ".join(Round.objects.values_list("key", flat=True)) or "none: run load_rounds"
            raise CommandError(f"No round {options['round']!r}. Known rounds: {keys}.") from None
        frame = results_frame(round_, published_only=not options["include_unpublished"])
        write(frame, options["format"], sys.stdout)
