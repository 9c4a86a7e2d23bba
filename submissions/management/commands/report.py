import json

from django.core.management.base import BaseCommand, CommandError

from submissions.models import Submission
from submissions.reports import report_dict, report_text


class Command(BaseCommand):
    help = "Print a submission's report: every finding with severity, rule id, file, line, message and hint."

    def add_arguments(self, parser):
        parser.add_argument("submission_id", type=int)
        parser.add_argument("--format", choices=["text", "json"], default="text")

    def handle(self, *args, submission_id, **options):
        try:
            submission = Submission.objects.select_related("round", "submitter").get(
                pk=submission_id
            )
        except Submission.DoesNotExist:
            raise CommandError(f"No submission {submission_id}.") from None
        if options["format"] == "json":
            self.stdout.write(json.dumps(report_dict(submission), indent=1))
        else:
            self.stdout.write(report_text(submission))
