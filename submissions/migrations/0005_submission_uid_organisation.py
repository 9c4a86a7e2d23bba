# A unique uid for each existing submission: added empty, filled one by one, then made unique and required
# (a default alone would give every existing row the same value).

import uuid

import django.db.models.deletion
from django.db import migrations, models


def fill_uids(apps, schema_editor):
    Submission = apps.get_model("submissions", "Submission")
    for pk in Submission.objects.filter(uid__isnull=True).values_list("pk", flat=True).iterator():
        Submission.objects.filter(pk=pk).update(uid=uuid.uuid4())


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0001_initial"),
        ("submissions", "0004_bundle_per_uploader"),
    ]

    operations = [
        migrations.AddField(
            model_name="submission",
            name="uid",
            field=models.UUIDField(null=True, editable=False),
        ),
        migrations.RunPython(fill_uids, migrations.RunPython.noop, elidable=True),
        migrations.AlterField(
            model_name="submission",
            name="uid",
            field=models.UUIDField(default=uuid.uuid4, unique=True, editable=False),
        ),
        migrations.AddField(
            model_name="submission",
            name="organisation",
            field=models.ForeignKey(
                blank=True,
                help_text="The organisation it was uploaded for; none for imports from the command line.",
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="submissions",
                to="accounts.organisation",
            ),
        ),
    ]
