from django.core.management.base import BaseCommand

from leaderboard.rounds import load_all


class Command(BaseCommand):
    help = "Load the shipped round files (leaderboard/rounds/*.toml) into the catalogue. Idempotent."

    def handle(self, *args, **options):
        for round_ in load_all():
            self.stdout.write(f"{round_.key}: {round_.benchmarks.count()} benchmarks")
