import json
import uuid

from django.core.management.base import BaseCommand, CommandError

from submissions.checking.reports import report_dict, report_text
from submissions.models import Submission


class Command(BaseCommand):
    help = "Print a submission's report: every finding with severity, rule id, file, line, message and hint."

    def add_arguments(self, parser):
        parser.add_argument(
            "submission_id", help="the submission's id (its uid) or, for staff, its number"
        )
        parser.add_argument("--format", choices=["text", "json"], default="text")

    def handle(self, *args, submission_id, **options):
        try:
            key = (
                {"pk": int(submission_id)}
                if submission_id.isdigit()
                else {"uid": uuid.UUID(submission_id)}
            )
        except ValueError:
            raise CommandError(f"No submission {submission_id}.") from None
        try:
            submission = Submission.objects.select_related("round", "submitter").get(**key)
        except Submission.DoesNotExist:
            raise CommandError(f"No submission {submission_id}.") from None
        if options["format"] == "json":
            self.stdout.write(json.dumps(report_dict(submission), indent=1))
        else:
            self.stdout.write(report_text(submission))
