"""The round table's data: one row per public system, one cell per benchmark, as plain values.

`round_data(round_)` reads a round's public results in one query (plus one for its
benchmarks, one for its price lines and one for its reference checks), whatever the number of
rows, and returns plain dataclasses. They are not cached: the round page keeps what it renders
(leaderboard/pages/rounds.py), the one cache of the page. Filtering, sorting and grouping
into sections (division → category) is done on these by view.py and layout.py.
"""

import functools
from dataclasses import dataclass, field
from functools import cached_property
from urllib.parse import quote

from django.urls import reverse
from django.utils.translation import ngettext

from .. import panels
from ..access import public
from ..catalogue import findings_words
from ..catalogue.accelerators import family_of
from ..catalogue.frameworks import families_of
from ..catalogue.prices import PriceIndex
from ..catalogue.units import minutes as in_minutes
from ..models import Category, CloudPrice, Division, Round

DIVISIONS = [d.value for d in Division]
CATEGORIES = [c.value for c in Category]


@dataclass
class Bench:
    key: str
    name: str
    reference_time_s: float | None
    quality_target: float | None
    higher_is_better: bool

    @property
    def has_reference(self):
        return bool(self.reference_time_s)


@dataclass
class Cell:
    result_id: int
    url: str
    score_s: float | None
    speedup: float | None
    energy_j: float | None
    runs_counted: int
    findings: (
        str  # what changes how its number reads ('' for most): a reference check that disputes it
    )
    public_id: str = ""
    not_scored_because: str = ""  # why a public result has no score ('' when it has one)
    power_result: bool = False  # its bundle measured power (MLPerf Power)
    energy_message: str = ""  # why a power result has no energy score

    @property
    def minutes(self):
        return in_minutes(self.score_s)

    @property
    def energy_kj(self):
        return None if self.energy_j is None else self.energy_j / 1000


@functools.lru_cache(maxsize=1024)
def organisation_url(organisation: str) -> str:
    """The organisation page's address, worked out once per name (a round has some 20 organisations;
    reverse() for each of 400 rows would add some 10 ms to a cold render); '' for no name."""
    return reverse("leaderboard:organisation", args=[organisation]) if organisation else ""


@dataclass
class Row:
    system_id: int
    submitter: str
    key: str
    name: str
    url: str
    division: str
    category: str
    processor_model: str
    processor_count: int | None
    accelerator_model: str
    accelerator_count: int | None
    nodes: int | None
    framework: str
    organisation: str = ""  # the submitter's organisation (leaderboard.catalogue.organisations): what the filter selects
    published_as: str = ""  # the description's submitter, which MLCommons shows; '' where none

    cells: dict[str, Cell] = field(default_factory=dict)
    cloud_scale: float | None = None
    cloud_scale_note: str = ""  # the tooltip: both prices, their dates and sources
    cloud_scale_unverified: bool = False
    code_url: str = (
        ""  # its submitter's code folder where MLCommons published it (code_url), else ''
    )
    accelerator_family: str = (
        ""  # leaderboard/catalogue/accelerators.toml; '' for a name in no family
    )
    framework_families: tuple[
        str, ...
    ] = ()  # leaderboard/catalogue/frameworks.toml: every one it names
    distinct: str = ""  # where other rows of the round share its name: what tells it apart
    apart: str = (
        ""  # where other rows share its submitter and key: its system's uid (address_apart)
    )

    @property
    def organisation_url(self) -> str:
        return organisation_url(self.organisation)

    @property
    def division_label(self) -> str:
        """The division in MLCommons' word for it ("Closed")."""
        return Division(self.division).label if self.division in DIVISIONS else self.division

    @property
    def category_label(self) -> str:
        """The availability in MLCommons' words ("Available on-premise")."""
        return Category(self.category).label if self.category in CATEGORIES else self.category

    @property
    def submitter_shown(self) -> str:
        """The organisation as MLCommons shows it (the description's submitter), else the folder's name."""
        return self.published_as or self.submitter

    @property
    def public_ids(self) -> list[str]:
        return sorted(c.public_id for c in self.cells.values() if c.public_id)

    @property
    def slug(self):
        """The system's stable id in compare links: submitter/key, and where other rows share that address
        (folders published side by side: address_apart), /<its system's uid>."""
        return f"{self.submitter}/{self.key}" + (f"/{self.apart}" if self.apart else "")

    @property
    def has_power(self) -> bool:
        return any(c.power_result or c.energy_j is not None for c in self.cells.values())

    def energy_per_accelerator_kj(self, cell: Cell) -> float | None:
        if cell.energy_j is None or not self.accelerator_count:
            return None
        return cell.energy_j / 1000 / self.accelerator_count

    @property
    def avg_power_kw(self):
        """Mean power over the benchmarks where energy was measured: energy ÷ time to train."""
        values = [c.energy_j / c.score_s for c in self.cells.values() if c.energy_j and c.score_s]
        return sum(values) / len(values) / 1000 if values else None

    @property
    def search_text(self):
        return " ".join(
            [
                self.submitter,
                self.published_as,
                self.organisation,
                self.name,
                self.key,
                self.processor_model,
                self.accelerator_model,
                self.framework,
            ]
        ).lower()


@dataclass
class RoundData:
    """A round's rows, as cached. Each has_* answer scans every cell and a page asks each several
    times (the form, the columns, the exports): each is worked out once."""

    round_key: str
    benchmarks: list[Bench]
    rows: list[Row]

    @property
    def has_reference(self):
        return any(b.has_reference for b in self.benchmarks)

    @cached_property
    def has_energy(self):
        return any(c.energy_j is not None for r in self.rows for c in r.cells.values())

    @cached_property
    def has_power(self):
        """Whether the round has power results (MLPerf Power), scored or not."""
        return any(r.has_power for r in self.rows)

    @cached_property
    def has_cloud_scale(self):
        """Whether any system has a cloud scale: a price line with a known price, and a reference price."""
        return any(r.cloud_scale is not None for r in self.rows)

    @cached_property
    def has_price_lines(self):
        return any(r.cloud_scale_note for r in self.rows)


RESULT_FIELDS = [
    "id",
    "system_id",
    "benchmark__key",
    "score_s",
    "speedup",
    "energy_j",
    "runs_counted",
    "error_count",
    "warning_count",
    "advisory",
    "public_id",
    "score_message",
    "system__key",
    "system__name",
    "system__submitter__name",
    "system__submitter__organisation",
    "system__published_submitter",
    "system__division",
    "system__category",
    "system__processor_model",
    "system__processor_count",
    "system__accelerator_model",
    "system__accelerator_count",
    "system__nodes",
    "system__framework",
    "system__uid",
    "power_result",
    "energy_message",
    "path",
    "benchmark__position",
]
# The order of the rows, and of a row's cells: by submitter, system key, system, benchmark.
_ORDER = [
    RESULT_FIELDS.index(f)
    for f in ("system__submitter__name", "system__key", "system_id", "benchmark__position")
]


def round_data(round_: Round) -> RoundData:
    """Read the round's public results into rows (three queries whatever the size)."""
    benchmarks = [
        Bench(b.key, b.name, b.reference_time_s, b.quality_target, b.higher_is_better)
        for b in round_.benchmarks.all()
    ]
    order = {b.key: i for i, b in enumerate(benchmarks)}
    prices = PriceIndex(list(CloudPrice.objects.filter(round=round_)))
    rows: dict[int, Row] = {}
    results = public.results().filter(system__round=round_).order_by().values_list(*RESULT_FIELDS)
    # Sorted here, not by the database: PostgreSQL sorted a 400-system round's 4,000 wide rows by their
    # text keys through the C library's strcoll (C.UTF-8 is no plain C to PostgreSQL 15), 105-155 ms of
    # a cold render at load 17 against 19-47 ms unsorted (bench/cold_render.py). Python compares code
    # points, which is C.UTF-8's order.
    results = sorted(results, key=lambda values: [values[i] for i in _ORDER])
    uids = {}  # system id -> its uid
    for values in results:
        r = dict(zip(RESULT_FIELDS, values))
        uids[r["system_id"]] = r["system__uid"]
        row = rows.get(r["system_id"])
        if row is None:
            row = rows[r["system_id"]] = _row(round_, r, prices)
        if r["benchmark__key"] in order:
            row.cells[r["benchmark__key"]] = _cell(row, r)
    address_apart(list(rows.values()), uids)
    round_ids = (
        public.results().filter(system__round=round_).order_by().values_list("id", flat=True)
    )
    _flag_disputed(list(rows.values()), round_ids)
    tell_apart(list(rows.values()))
    return RoundData(round_.key, benchmarks, list(rows.values()))


def _row(round_: Round, r: dict, prices: PriceIndex) -> Row:
    """A system's row, from the first of its results' values (RESULT_FIELDS), without its cells."""
    row = Row(
        system_id=r["system_id"],
        submitter=r["system__submitter__name"],
        key=r["system__key"],
        name=r["system__name"] or r["system__key"],
        url=reverse(
            "leaderboard:system",
            args=[round_.key, r["system__submitter__name"], r["system__key"]],
        ),
        division=r["system__division"],
        category=r["system__category"],
        processor_model=r["system__processor_model"],
        processor_count=r["system__processor_count"],
        accelerator_model=r["system__accelerator_model"],
        accelerator_count=r["system__accelerator_count"],
        nodes=r["system__nodes"],
        framework=r["system__framework"],
        organisation=r["system__submitter__organisation"] or r["system__submitter__name"],
        published_as=r["system__published_submitter"],
        accelerator_family=family_of(r["system__accelerator_model"] or "") or "",
        framework_families=families_of(r["system__framework"] or ""),
    )
    scale = prices.cloud_scale(row.submitter, row.key, row.name) if prices else None
    if scale is not None:
        row.cloud_scale = scale.value
        row.cloud_scale_note = scale.explanation
        row.cloud_scale_unverified = scale.unverified
    row.code_url = code_url(round_.published_tree, r["path"])
    return row


def _cell(row: Row, r: dict) -> Cell:
    """A result's cell in its system's row."""
    return Cell(
        result_id=r["id"],
        url=f"{row.url}{r['benchmark__key']}/",
        score_s=r["score_s"],
        speedup=r["speedup"],
        energy_j=r["energy_j"],
        runs_counted=r["runs_counted"],
        findings="",  # set by _flag_disputed, from the reference checks
        public_id=r["public_id"] or "",
        not_scored_because="" if r["score_s"] is not None else (r["score_message"] or "no score"),
        power_result=r["power_result"],
        energy_message=r["energy_message"],
    )


def code_url(published_tree: str, result_path: str) -> str:
    """The code folder of a result's submitter where MLCommons published the round, as MLCommons' summary
    links it (mlperf-logging's result_summarizer: <repository>/<submitter>/benchmarks): the round's
    published tree and the submitter's folder, the first of the result's path <Submitter>/results/...
    '' for a round published nowhere the portal knows, or a path of another layout (v0.5's)."""
    folder, _, rest = result_path.partition("/")
    if not published_tree or not folder or not rest.startswith("results/"):
        return ""
    return f"{published_tree.rstrip('/')}/{quote(folder)}/benchmarks"


def address_apart(rows: list[Row], uids: dict) -> None:
    """Give rows that share an address (a submitter and system key) one each: the system's uid in the query
    (`?system=<uid>`, which the system and result pages read). MLCommons published some submitters'
    folders side by side with the same system folders (v4.0: smc, smc-ac-power, smc-dc-power)."""
    at: dict[tuple[str, str], list[Row]] = {}
    for row in rows:
        at.setdefault((row.submitter, row.key), []).append(row)
    for group in at.values():
        if len(group) < 2:
            continue
        for row in group:
            row.apart = str(uids[row.system_id])
            query = f"?system={row.apart}"
            for bench, cell in row.cells.items():
                cell.url = f"{row.url}{bench}/{query}"
            row.url += query


def _flag_disputed(rows: list[Row], result_ids) -> None:
    """Flag the cells whose latest reference check disputes the result (one query for the round). Logging
    nits and other findings that do not change how the number reads are on the result's page, unflagged.
    `result_ids`: the rows' results as a query, which the provider reads as a subquery: a list of a
    400-system round's 4,000 ids cost 60-280 ms to bind (bench/leaderboard.py, cold render), and so did
    reading the query on its own first (panels once made an empty list per id: 75-100 ms under load)."""
    cells = {cell.result_id: cell for row in rows for cell in row.cells.values()}
    if not cells:
        return
    for result_id, checks in panels.reference_checks(result_ids).items():
        flags = findings_words.reader_flags(
            0.0, "", "", checks
        )  # scored and public: only a dispute
        if flags and result_id in cells:
            cells[result_id].findings = flags[0]


def tell_apart(rows: list[Row]) -> None:
    """Set `distinct` on rows that share a system name with others of the round: the accelerator
    count, else the node count, where that differs within the group, and the system's key where
    rows are still alike (e.g. "Tyche (1x NVIDIA GB200 NVL72)" with 8, 16, 64 or 72 GPUs, and the
    72-GPU ones by key: one per software stack)."""
    groups: dict[str, list[Row]] = {}
    for row in rows:
        groups.setdefault(row.name.casefold(), []).append(row)
    for group in groups.values():
        if len(group) < 2:
            continue
        for row in group:
            alike, parts = group, []
            for attr, words in (
                (
                    "accelerator_count",
                    lambda n: ngettext("%(n)s accelerator", "%(n)s accelerators", n),
                ),
                ("nodes", lambda n: ngettext("%(n)s node", "%(n)s nodes", n)),
            ):
                if len({getattr(r, attr) for r in alike}) > 1 and getattr(row, attr):
                    n = getattr(row, attr)
                    parts.append(words(n) % {"n": n})
                    alike = [r for r in alike if getattr(r, attr) == getattr(row, attr)]
            if len(alike) > 1 or not parts:
                parts.append(row.key)
            row.distinct = " · ".join(parts)
