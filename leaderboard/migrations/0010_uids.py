"""A UUID for each system, result and price line: the id the API and links show, never the pk.

Added nullable, filled (on PostgreSQL in one UPDATE per table), then made unique and required."""

import uuid

from django.db import migrations, models

TABLES = ("system", "result", "cloudprice")


def fill(apps, schema_editor):
    for name in TABLES:
        model = apps.get_model("leaderboard", name)
        if schema_editor.connection.vendor == "postgresql":
            schema_editor.execute(
                f"UPDATE {model._meta.db_table} SET uid = gen_random_uuid() WHERE uid IS NULL"
            )
            continue
        rows = list(model.objects.filter(uid__isnull=True).only("pk"))
        for row in rows:
            row.uid = uuid.uuid4()
        model.objects.bulk_update(rows, ["uid"], batch_size=1000)


def field(**kwargs):
    return models.UUIDField(
        default=uuid.uuid4, editable=False, help_text="Its id outside the portal.", **kwargs
    )


class Migration(migrations.Migration):
    dependencies = [
        ("leaderboard", "0009_scaling_claimed_blocking_rules"),
    ]

    operations = [
        # No default while added: Django would give every existing row the same one.
        *(
            migrations.AddField(name, "uid", models.UUIDField(null=True, editable=False))
            for name in TABLES
        ),
        migrations.RunPython(fill, migrations.RunPython.noop),
        *(migrations.AlterField(name, "uid", field(unique=True)) for name in TABLES),
    ]
