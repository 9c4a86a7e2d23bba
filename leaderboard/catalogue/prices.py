"""Price tables as data: leaderboard/catalogue/prices/<round-key>.toml, loaded into CloudPrice rows.

A file lists the round's reference price and the prices of its cloud systems, each with its
provider, instance, on-demand price per hour, date, source and status (sourced, unverified
or placeholder). Loading only adds lines that are not in the catalogue yet: prices that
staff edited in the admin stay as they are unless `replace=True`.

Cloud scale = a system's price ÷ the reference price; `cloud_scales` works it out for the
systems of a round from the round's lines.
"""

import tomllib
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

from django.db import transaction

from ..models import CloudPrice, Round

PRICES_DIR = Path(__file__).resolve().parent / "prices"
FIELDS = [
    "provider",
    "instance",
    "price_per_hour",
    "currency",
    "as_of",
    "source",
    "status",
    "notes",
]


def read_price_file(path: Path) -> dict:
    with open(path, "rb") as f:
        data = tomllib.load(f)
    if "round" not in data:
        raise ValueError(f"{path.name}: missing round")
    statuses = set(CloudPrice.Status.values)
    for i, line in enumerate(data.get("prices", [])):
        for k in ("provider", "instance", "status"):
            if k not in line:
                raise ValueError(f"{path.name}: price #{i + 1} has no {k}")
        if line["status"] not in statuses:
            raise ValueError(
                f"{path.name}: price #{i + 1}: status must be one of {', '.join(sorted(statuses))}"
            )
        if line["status"] != "placeholder" and not (
            line.get("price_per_hour") and line.get("source") and line.get("as_of")
        ):
            raise ValueError(
                f"{path.name}: price #{i + 1} is {line['status']} but lacks a price, a source or a date"
            )
        if not line.get("reference") and not (line.get("system_key") or line.get("system_name")):
            raise ValueError(
                f"{path.name}: price #{i + 1} names no system (system_key or system_name)"
            )
    return data


@transaction.atomic
def load_prices(data: dict, *, replace: bool = False) -> int:
    """Add the file's lines to its round's price table; return how many were added or replaced."""
    from ..cache import invalidate_round

    round_ = Round.objects.get(key=data["round"])
    changed = 0
    for line in data.get("prices", []):
        lookup = {
            "round": round_,
            "reference": bool(line.get("reference")),
            "submitter": line.get("submitter", ""),
            "system_key": line.get("system_key", ""),
            "system_name": line.get("system_name", ""),
        }
        if lookup["reference"]:
            lookup = {"round": round_, "reference": True}
        values = {k: line[k] for k in FIELDS if k in line}
        if "price_per_hour" in values:
            values["price_per_hour"] = Decimal(str(values["price_per_hour"]))
        existing = CloudPrice.objects.filter(**lookup).first()
        if existing is None:
            CloudPrice.objects.create(**lookup, **values)
            changed += 1
        elif replace:
            for k, v in values.items():
                setattr(existing, k, v)
            existing.save()
            changed += 1
    if changed:
        invalidate_round(round_.key)
    return changed


def load_all(directory: Path = PRICES_DIR, *, replace: bool = False) -> dict[str, int]:
    loaded = {}
    for path in sorted(directory.glob("*.toml")):
        data = read_price_file(path)
        if Round.objects.filter(key=data["round"]).exists():
            loaded[data["round"]] = load_prices(data, replace=replace)
    return loaded


@dataclass(frozen=True)
class CloudScale:
    """A system's cloud scale and the two price lines it comes from."""

    value: float | None
    price: CloudPrice
    reference: CloudPrice | None

    @property
    def unverified(self) -> bool:
        lines = [self.price, self.reference] if self.reference else [self.price]
        return any(p.status != CloudPrice.Status.SOURCED for p in lines)

    @property
    def explanation(self) -> str:
        """One line for a tooltip: both prices with their dates, sources and status."""

        def describe(p):
            # Words for readers: no "as of no date", no "placeholder" (issue 15).
            amount = f"{p.currency} {p.price_per_hour:.2f}/h" if p.known else "price not known"
            date = f"as of {p.as_of.strftime('%-d %b %Y')}" if p.as_of else "undated"
            checked = {
                CloudPrice.Status.SOURCED: "checked against its source",
                CloudPrice.Status.UNVERIFIED: "not yet checked",
            }.get(p.status, "no price yet")
            return f"{p.provider} {p.instance}: {amount} ({date}; {checked}; source: {p.source or 'none'})"

        if self.value is None:
            why = (
                "no reference price"
                if not (self.reference and self.reference.known)
                else "no price for this system"
            )
            return f"No cloud scale: {why}. {describe(self.price)}"
        return f"Cloud scale {self.value:.2f} = {describe(self.price)} ÷ reference {describe(self.reference)}"


class PriceIndex:
    """A round's price lines, looked up by system in constant time."""

    def __init__(self, prices: list[CloudPrice]):
        self.reference = next((p for p in prices if p.reference), None)
        self.by_key = {
            (p.submitter, p.system_key): p for p in prices if not p.reference and p.system_key
        }
        self.by_name = {
            (p.submitter, p.system_name): p for p in prices if not p.reference and not p.system_key
        }

    def __bool__(self):
        return bool(self.by_key or self.by_name)

    def cloud_scale(self, submitter: str, system_key: str, system_name: str) -> CloudScale | None:
        """A line naming the system's key wins over one naming its name; None if no line prices it."""
        price = self.by_key.get((submitter, system_key)) or self.by_name.get(
            (submitter, system_name)
        )
        if price is None:
            return None
        reference = self.reference
        value = None
        if price.known and reference is not None and reference.known:
            value = float(price.price_per_hour / reference.price_per_hour)
        return CloudScale(value, price, reference)


@dataclass(frozen=True)
class TrainingCost:
    """What training once cost in the cloud: the price line's on-demand price per hour × the hours to train."""

    amount: float
    hours: float
    price: CloudPrice


def training_cost(scale: CloudScale | None, score_s: float | None) -> TrainingCost | None:
    """The cost of a result of a system priced by `scale`'s line; None without a known, dated price
    (a placeholder line, a price without its date) or without a score."""
    if scale is None or score_s is None or not scale.price.known or not scale.price.as_of:
        return None
    hours = score_s / 3600
    return TrainingCost(float(scale.price.price_per_hour) * hours, hours, scale.price)


def cloud_scale(
    prices: list[CloudPrice], submitter: str, system_key: str, system_name: str
) -> CloudScale | None:
    """The cloud scale of one system from its round's price lines, or None if no line prices it."""
    return PriceIndex(prices).cloud_scale(submitter, system_key, system_name)
