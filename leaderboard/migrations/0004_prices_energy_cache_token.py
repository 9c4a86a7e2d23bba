import django.db.models.deletion
from django.db import migrations, models

import leaderboard.models


def give_each_round_its_own_token(apps, schema_editor):
    Round = apps.get_model("leaderboard", "Round")
    for round_ in Round.objects.all():
        round_.cache_token = leaderboard.models.new_cache_token()
        round_.save(update_fields=["cache_token"])


class Migration(migrations.Migration):

    dependencies = [
        ("leaderboard", "0003_result_finding_counts"),
    ]

    operations = [
        migrations.AddField(
            model_name="round",
            name="cache_token",
            field=models.CharField(
                default=leaderboard.models.new_cache_token, editable=False, max_length=32,
                help_text="Part of every cache key of the round's pages and exports; replaced on publication "
                "(leaderboard.cache.invalidate_round).",
            ),
        ),
        migrations.RunPython(give_each_round_its_own_token, migrations.RunPython.noop),
        migrations.AddField(
            model_name="result",
            name="energy_j",
            field=models.FloatField(
                blank=True, null=True,
                help_text="Energy to train in joules, where the submission measured power (blank otherwise).",
            ),
        ),
        migrations.CreateModel(
            name="CloudPrice",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("reference", models.BooleanField(default=False, help_text="The round's reference system (cloud scale 1).")),
                ("submitter", models.CharField(blank=True, help_text="Submitter of the priced system.", max_length=200)),
                ("system_key", models.CharField(
                    blank=True, max_length=200,
                    help_text="Key (folder name) of the priced system; or leave blank and give its name.",
                )),
                ("system_name", models.CharField(
                    blank=True, max_length=300,
                    help_text="Prices every system of the submitter with this name (when no key is given).",
                )),
                ("provider", models.CharField(max_length=100)),
                ("instance", models.CharField(help_text="Instance type or system as the provider sells it.", max_length=200)),
                ("price_per_hour", models.DecimalField(
                    blank=True, decimal_places=4, help_text="On-demand price per hour; blank if unknown.",
                    max_digits=12, null=True,
                )),
                ("currency", models.CharField(default="USD", max_length=3)),
                ("as_of", models.DateField(blank=True, help_text="The date the price applies to.", null=True)),
                ("source", models.CharField(blank=True, help_text="Where the price comes from (URL or citation).", max_length=500)),
                ("status", models.CharField(
                    choices=[
                        ("sourced", "Sourced: checked against the cited source"),
                        ("unverified", "Unverified: from a public price list, not yet checked"),
                        ("placeholder", "Placeholder: no price known yet"),
                    ],
                    default="placeholder", max_length=12,
                )),
                ("notes", models.TextField(blank=True)),
                ("updated_at", models.DateTimeField(auto_now=True)),
                ("round", models.ForeignKey(
                    on_delete=django.db.models.deletion.CASCADE, related_name="prices", to="leaderboard.round",
                )),
            ],
            options={"ordering": ["round", "-reference", "submitter", "system_key"]},
        ),
        migrations.AddConstraint(
            model_name="cloudprice",
            constraint=models.UniqueConstraint(
                condition=models.Q(("reference", True)), fields=("round",), name="one_reference_price_per_round",
            ),
        ),
        migrations.AddConstraint(
            model_name="cloudprice",
            constraint=models.UniqueConstraint(
                condition=models.Q(("reference", False)), fields=("round", "submitter", "system_key", "system_name"),
                name="one_price_per_system",
            ),
        ),
    ]
