"""The filter controls: a Django form whose choices (and their counts) come from the round's rows, and
the filters of several values as checklists for the template."""

from django import forms
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from ..catalogue import accelerators, frameworks
from ..models import Category, Division
from .params import (
    COLUMNS,
    ENERGY_SHOWS,
    FAMILY,
    GROUPS,
    NO_COLUMNS,
    SHOW_CHOICES,
    TEXT_SORTS,
)
from .rows import RoundData, Row

# The text sorts' names in the sort menu (params.TEXT_SORTS).
SORT_WORDS = {
    "submitter": _("Submitter"),
    "system": _("System"),
    "processor": _("Processor"),
    "accelerator": _("Accelerator"),
    "software": _("Software"),
}


def _distinct(values):
    counts = {}
    for v in values:
        if v:
            counts[v] = counts.get(v, 0) + 1
    return sorted(counts.items(), key=lambda kv: kv[0].lower())


class TableForm(forms.Form):
    """The filter controls, with choices (and their counts) from the round's rows."""

    division = forms.ChoiceField(required=False, label=_("Division"))
    category = forms.MultipleChoiceField(required=False, label=_("Availability"))
    submitter = forms.MultipleChoiceField(required=False, label=_("Submitter"))
    accelerator = forms.MultipleChoiceField(required=False, label=_("Accelerator"))
    processor = forms.MultipleChoiceField(required=False, label=_("Processor"))
    framework = forms.MultipleChoiceField(required=False, label=_("Framework"))
    benchmark = forms.ChoiceField(required=False, label=_("Benchmark"))
    acc_min = forms.IntegerField(required=False, min_value=0, label=_("Accelerators from"))
    acc_max = forms.IntegerField(required=False, min_value=0, label=_("Accelerators to"))
    q = forms.CharField(required=False, max_length=100, label=_("Search"), strip=True)
    power_only = forms.BooleanField(required=False, label=_("Power results only"))
    show = forms.ChoiceField(required=False, label=_("Show"), widget=forms.RadioSelect)
    sort = forms.ChoiceField(required=False, label=_("Sort by"))
    chart = forms.ChoiceField(required=False, label=_("Scaling chart benchmark"))
    cols = forms.MultipleChoiceField(required=False, label=_("Columns"))
    group = forms.ChoiceField(required=False, label=_("Tables"), choices=list(GROUPS.items()))

    def __init__(self, data, round_data: RoundData, counted_under=None, **kwargs):
        """`counted_under`: the TableView whose other filters each checklist's counts follow (a count is
        of the rows that the view's filters but that one keep); without it, every row of the round."""
        super().__init__(data, **kwargs)
        rows = round_data.rows

        def counted(name):
            return counted_under.rows_but(round_data, name) if counted_under else rows

        # name → value → how many rows the value would keep, under the other filters.
        self.counts: dict[str, dict[str, int]] = {}
        any_ = [("", _("Any"))]
        present = {(r.division, r.category) for r in rows}
        self.fields["division"].choices = any_ + [
            (d.value, d.label) for d in Division if any(p[0] == d.value for p in present)
        ]
        self.fields["category"].choices = [
            (c.value, c.label) for c in Category if any(p[1] == c.value for p in present)
        ]
        self.counts["category"] = _counts(r.category for r in counted("category"))
        # The submitter filter selects organisations: one choice for all the names one submitted under.
        for name, attr in (
            ("submitter", "organisation"),
            ("accelerator", "accelerator_model"),
            ("processor", "processor_model"),
            ("framework", "framework"),
        ):
            choices, self.counts[name] = _checklist(name, attr, rows, counted(name))
            self.fields[name].choices = choices
            self.fields[name].widget.attrs["size"] = min(6, max(2, len(choices)))
        self.fields["benchmark"].choices = any_ + [(b.key, b.name) for b in round_data.benchmarks]
        self.fields["chart"].choices = [("", _("The one with the most results"))] + [
            (b.key, b.name) for b in round_data.benchmarks
        ]
        self.fields["show"].choices = [
            c
            for c in SHOW_CHOICES
            if c[0] in ("minutes", "acc_hours")
            or (c[0] == "speedup" and round_data.has_reference)
            or (c[0] in ENERGY_SHOWS and round_data.has_power)
        ]
        self.fields["sort"].choices = _sorts(round_data)
        self.fields["cols"].choices = [*COLUMNS.items(), (NO_COLUMNS, gettext("none"))]


def _checklist(name: str, attr: str, rows: list[Row], among: list[Row]):
    """A checklist's choices (its families first, where it has them) and how many of `among` each
    value and family keeps."""
    choices = [(value, value) for value, _count in _distinct(getattr(r, attr) for r in rows)]
    counts = _counts(getattr(r, attr) for r in among)
    grouping = {
        "accelerator": (accelerators.family_table(), _accelerator_in),
        "framework": (frameworks.family_table(), _framework_in),
    }.get(name)
    if grouping:
        families, holds = grouping
        choices = _grouped(choices, rows, attr, families, holds)
        for family in families:
            counts[f"{FAMILY}{family.name}"] = sum(1 for r in among if holds(r, family.name))
    return choices, counts


def _sorts(round_data: RoundData) -> list[tuple[str, str]]:
    """The sort menu: the text sorts, then what this round's table has, then each benchmark; each
    again reversed."""
    sorts = [("", gettext("Submitter, then system"))] + [
        (k, gettext(SORT_WORDS[k])) for k in TEXT_SORTS
    ]
    sorts += [
        ("availability", gettext("Availability")),
        ("nodes", gettext("Nodes")),
        ("public_id", gettext("Public id")),
    ]
    if round_data.has_cloud_scale:
        sorts.append(("cloud_scale", gettext("Cloud scale")))
    if round_data.has_energy:
        sorts.append(("power", gettext("Average power")))
    sorts += [(f"b.{b.key}", b.name) for b in round_data.benchmarks]
    return sorts + [
        (f"-{k}", gettext("%(sort)s (reversed)") % {"sort": label}) for k, label in sorts if k
    ]


def _counts(values) -> dict[str, int]:
    counts: dict[str, int] = {}
    for v in values:
        counts[v] = counts.get(v, 0) + 1
    return counts


def _accelerator_in(row: Row, family: str) -> bool:
    return row.accelerator_family == family


def _framework_in(row: Row, family: str) -> bool:
    return family in row.framework_families


def _grouped(choices, rows, attr, families, belongs) -> list:
    """The exact names grouped under their family (an <optgroup> each), led by an option for the
    whole family: every name it covers, also names that arrive later. Names in no family last.
    A name may be under several software families ("NeMo, PyTorch")."""
    row_of = {getattr(r, attr): r for r in rows}
    out, placed = [], set()
    for family in families:
        count = sum(1 for r in rows if belongs(r, family.name))
        if not count:
            continue
        members = [c for c in choices if c[0] not in placed and belongs(row_of[c[0]], family.name)]
        group = [
            (f"{FAMILY}{family.name}", gettext("All %(family)s") % {"family": family.name}),
            *members,
        ]
        out.append((family.name, group))
        placed |= {c[0] for c in members}
    rest = [c for c in choices if c[0] not in placed]
    if rest:
        out.append((gettext("Other"), rest))
    return out


CHECKLISTS = ("category", "submitter", "accelerator", "processor", "framework")


def checklists(view, form: TableForm) -> list[dict]:
    """The filters of several values as lists of checkboxes (several chosen with plain clicks), in
    groups where the form's choices have them (a family's names under it, led by the whole family):
    name, label, groups [(group label or '', [(value, label, count, checked)])] and their number of
    options; a count is of the rows the value keeps under the other filters (form.counts).
    `view`: the TableView whose values are checked."""
    out = []
    for name in CHECKLISTS:
        chosen = set(getattr(view, name))
        counts = form.counts.get(name, {})
        groups = []
        for value, label in form.fields[name].choices:
            if isinstance(label, (list, tuple)):  # an <optgroup>: (group label, its choices)
                groups.append(
                    (value, [(v, text, counts.get(v, 0), v in chosen) for v, text in label])
                )
            else:
                if not groups or groups[-1][0]:
                    groups.append(("", []))
                groups[-1][1].append((value, label, counts.get(value, 0), value in chosen))
        out.append(
            {
                "name": name,
                "label": form.fields[name].label,
                "groups": groups,
                "size": sum(len(options) for _, options in groups),
            }
        )
    return out
