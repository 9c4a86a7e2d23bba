"""What the round page's query string may hold: units, columns, tables, filters by family, sorts.

Names and choices only; the form (form.py) checks a query against them and the view (view.py) reads it.
"""

from django.utils.translation import gettext_lazy as _

from .rows import CATEGORIES

SHOW_CHOICES = [
    ("speedup", _("speedup")),
    ("minutes", _("minutes")),
    ("acc_hours", _("per accelerator (acc-hours)")),
    ("energy", _("energy (kJ)")),
    ("energy_per_acc", _("energy per accelerator (kJ)")),
]
ENERGY_SHOWS = ("energy", "energy_per_acc")
# The descriptive columns, in the order shown after the benchmark columns; the column chooser
# (`cols` in the query string) shows or hides them. The system's name (with its submitter) and
# the benchmark columns are always shown.
COLUMNS = {
    "public_id": _("Public id"),
    "availability": _("Availability"),
    "submitter": _("Submitter"),
    "nodes": _("Nodes"),
    "processor": _("Processor"),
    "accelerator": _("Accelerator"),
    "software": _("Software"),
    "links": _("Logs and description"),
    "cloud_scale": _("Cloud scale"),
    "power": _("Avg. power"),
}
DEFAULT_COLUMNS = ("availability", "nodes", "accelerator", "software", "cloud_scale", "power")
# How the rows are split into tables: by default one table per division, sorted across availability
# categories (the fastest result heads it whatever its category); MLCommons' way is a choice.
GROUPS = {"": _("One table"), "availability": _("By availability (MLCommons' way)")}
NO_COLUMNS = "none"  # `cols=none`: every descriptive column hidden (an empty list is the default)
FAMILY = "family:"  # a filter value for every name of a family (accelerators.toml, frameworks.toml)
TEXT_SORTS = {
    "submitter": lambda r: r.submitter_shown.lower(),
    "system": lambda r: r.name.lower(),
    "processor": lambda r: (r.processor_model.lower(), r.processor_count or 0),
    "accelerator": lambda r: (r.accelerator_count or 0, r.accelerator_model.lower()),
    "software": lambda r: r.framework.lower(),
}
NUMBER_SORTS = {
    "nodes": lambda r: r.nodes,
    "public_id": lambda r: (r.public_ids or [None])[0],
    "cloud_scale": lambda r: r.cloud_scale,
    "power": lambda r: r.avg_power_kw,
    "availability": lambda r: CATEGORIES.index(r.category),  # cloud, on-premise, preview, research
}
MAX_LIST = 20  # values of one repeated parameter that are read
SORTABLE_COLUMNS = (
    "availability",
    "submitter",
    "system",
    "public_id",
    "nodes",
    "processor",
    "accelerator",
    "software",
    "cloud_scale",
    "power",
)
UNITS = {
    "energy": "kJ",
    "energy_per_acc": _("kJ/acc."),
    "acc_hours": _("acc-h"),
    "minutes": _("min"),
}
