"""Systems read before this migration: the description's submitter, and a bare "available" status read as
MLCommons' summary reads it (on-premise) where it was left "unknown". New ingests read both in
submissions/checking/systems.py; this fills the rows already there from their stored descriptions."""

from django.db import migrations, models


def _stated(description: dict, key: str) -> str:
    value = description.get(key) if isinstance(description, dict) else None
    return value.strip()[:300] if isinstance(value, str) else ""


def fill(apps, schema_editor):
    System = apps.get_model("leaderboard", "System")
    changed = []
    for system in System.objects.only("id", "category", "description").iterator(chunk_size=500):
        system.published_submitter = _stated(system.description, "submitter")
        if system.category == "unknown" and "available" in _stated(system.description, "status").lower():
            system.category = "onprem"
        changed.append(system)
    System.objects.bulk_update(changed, ["published_submitter", "category"], batch_size=500)


class Migration(migrations.Migration):

    dependencies = [
        ('leaderboard', '0017_power_trace_as_two_lists'),
    ]

    operations = [
        migrations.AddField(
            model_name='system',
            name='published_submitter',
            field=models.CharField(blank=True, help_text="The organisation as the description's `submitter` names it, which MLCommons shows (`CoreWeave + IBM + NVIDIA` for the folder `IBM+CoreWeave+NVIDIA`); blank where none is stated.", max_length=300),
        ),
        migrations.AlterField(
            model_name='system',
            name='category',
            field=models.CharField(choices=[('cloud', 'Available cloud'), ('onprem', 'Available on-premise'), ('preview', 'Preview'), ('research', 'Research, Development, or Internal (RDI)'), ('unknown', 'Unknown')], default='unknown', max_length=10),
        ),
        migrations.RunPython(fill, migrations.RunPython.noop),
    ]
