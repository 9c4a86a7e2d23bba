"""Validation.scored: how many results a pass scored, which peer review's rights are read from
(leaderboard/access/policy.py). Filled for the latest finished pass of each submission from its results' scores
as they stand; earlier passes are left at 0 (their scores were not kept)."""

from django.db import migrations, models
from django.db.models import Count, Q


def fill(apps, schema_editor):
    Validation = apps.get_model("submissions", "Validation")
    Submission = apps.get_model("submissions", "Submission")
    scored = Submission.objects.annotate(
        n=Count("systems__results", filter=Q(systems__results__score_s__isnull=False))
    ).filter(n__gt=0)
    for submission_id, n in scored.values_list("pk", "n").iterator():
        latest = (
            Validation.objects.filter(submission_id=submission_id, status="done")
            .order_by("-number")
            .first()
        )
        if latest is not None:
            Validation.objects.filter(pk=latest.pk).update(scored=n)


class Migration(migrations.Migration):
    dependencies = [
        ("submissions", "0011_remove_upload_sha256_state"),
        ("leaderboard", "0017_power_trace_as_two_lists"),
    ]

    operations = [
        migrations.AddField(
            model_name="validation",
            name="scored",
            field=models.PositiveIntegerField(
                default=0,
                help_text="How many results this pass gave a score: one or more, before the round's "
                "uploads closed, makes its organisation a peer reviewer of the round "
                "(leaderboard/access/policy.py).",
            ),
        ),
        migrations.RunPython(fill, migrations.RunPython.noop),
    ]
