from django.db import migrations, models


def file_submitters(apps, schema_editor):
    """Give the existing submitters their organisation by the alias list shipped with this code."""
    from leaderboard.catalogue.organisations import organisation_of

    Submitter = apps.get_model("leaderboard", "Submitter")
    rows = list(Submitter.objects.all())
    for row in rows:
        row.organisation = organisation_of(row.name)
    Submitter.objects.bulk_update(rows, ["organisation"], batch_size=500)


class Migration(migrations.Migration):

    dependencies = [
        ("leaderboard", "0007_result_public_id"),
    ]

    operations = [
        migrations.AlterField(
            model_name="submitter",
            name="name",
            field=models.CharField(help_text="The name as submitted.", max_length=200, unique=True),
        ),
        migrations.AddField(
            model_name="submitter",
            name="organisation",
            field=models.CharField(
                blank=True, db_index=True, editable=False, max_length=200,
                help_text="The organisation the name belongs to, by leaderboard/catalogue/organisations.toml: what filters, "
                "progress, compare and the API group by.",
            ),
        ),
        migrations.RunPython(file_submitters, migrations.RunPython.noop),
    ]
