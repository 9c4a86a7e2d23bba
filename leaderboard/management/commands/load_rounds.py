from django.core.management.base import BaseCommand

from leaderboard.catalogue import prices, rounds


class Command(BaseCommand):
    help = (
        "Load the shipped round files (leaderboard/catalogue/rounds/*.toml) and their price tables "
        "(leaderboard/catalogue/prices/*.toml) into the catalogue, and re-file submitters by their organisation "
        "(leaderboard/catalogue/organisations.toml). Idempotent: price lines edited in the admin are kept unless "
        "--replace-prices."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--replace-prices", action="store_true", help="overwrite price lines from the files"
        )

    def handle(self, *args, **options):
        for round_ in rounds.load_all():
            self.stdout.write(f"{round_.key}: {round_.benchmarks.count()} benchmarks")
        for key, added in prices.load_all(replace=options["replace_prices"]).items():
            self.stdout.write(
                f"{key}: {added} price line(s) {'replaced or ' if options['replace_prices'] else ''}added"
            )
        changed = rounds.refresh_submitters()
        self.stdout.write(f"organisations: {changed} submitter(s) re-filed")
