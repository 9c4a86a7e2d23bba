"""The round table: published results of a round grouped division → category → system row.

One query for the results (with their systems, submitters and benchmarks); the grouping is
done in Python so the number of queries does not grow with the number of rows.
"""

from dataclasses import dataclass, field

from .models import Category, Division, Result, Round


@dataclass
class Row:
    system: object
    cells: dict = field(default_factory=dict)  # benchmark key -> Result


@dataclass
class Section:
    division: str
    category: str
    rows: list[Row]

    @property
    def title(self):
        return f"{Division(self.division).label} division, {Category(self.category).label.lower()}"


def published_results(round_: Round):
    return (
        Result.objects.filter(system__round=round_, published=True)
        .select_related("system__submitter", "benchmark")
        .order_by("system__submitter__name", "system__key", "benchmark__position")
    )


def round_table(round_: Round) -> list[Section]:
    rows: dict[int, Row] = {}
    for result in published_results(round_):
        row = rows.setdefault(result.system_id, Row(result.system))
        row.cells[result.benchmark.key] = result
    division_order = [d.value for d in Division]
    category_order = [c.value for c in Category]
    grouped: dict[tuple, list[Row]] = {}
    for row in rows.values():
        grouped.setdefault((row.system.division, row.system.category), []).append(row)
    return [
        Section(division, category, grouped[(division, category)])
        for division, category in sorted(
            grouped, key=lambda k: (division_order.index(k[0]), category_order.index(k[1]))
        )
    ]
