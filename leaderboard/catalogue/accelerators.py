"""Accelerator families: which chip a name that a submitter wrote belongs to, and which agents measure it.

`accelerators.toml` lists the families, each with the patterns of the names it covers, the queue of the
reference-check agents that can measure it ("none" with the reason where none can) and the exact names seen
in the published rounds; `[[none]]` lists names in no family on purpose, with the reason. The lookup is pure
(no Django), for the plausibility checks, the table's filters and the agents.
"""

import functools
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

DATA_FILE = Path(__file__).resolve().parent / "accelerators.toml"
NO_QUEUE = "none"


@dataclass(frozen=True)
class Family:
    name: str
    patterns: tuple[re.Pattern, ...]
    queue: str  # the agents' queue key (agents consume gpu.<queue>); NO_QUEUE where no agent can measure it
    reason: str  # why no agent can, where queue is NO_QUEUE
    names: tuple[str, ...]  # the exact names seen in the published rounds
    precision: str = "bf16"  # what its probe runs in ("fp16" where the chip has no bf16)


@functools.cache
def _data() -> dict:
    with open(DATA_FILE, "rb") as f:
        return tomllib.load(f)


@functools.cache
def family_table() -> tuple[Family, ...]:
    """Every family, in the file's order."""
    return tuple(
        Family(
            name=family["name"],
            patterns=tuple(re.compile(p, re.IGNORECASE) for p in family["patterns"]),
            queue=family.get("queue", NO_QUEUE),
            reason=family.get("reason", ""),
            names=tuple(family.get("names", ())),
            precision=family.get("precision", "bf16"),
        )
        for family in _data().get("family", [])
    )


def families() -> list[tuple[str, list[re.Pattern]]]:
    """(family name, compiled patterns), in the file's order: the first match wins."""
    return [(f.name, list(f.patterns)) for f in family_table()]


@functools.lru_cache(maxsize=256)
def family_of(accelerator_model: str) -> str | None:
    """The family of an accelerator name: the first family one of whose patterns it matches; None for none."""
    found = _family(accelerator_model)
    return found.name if found else None


def _family(accelerator_model: str) -> Family | None:
    for family in family_table():
        if any(p.search(accelerator_model or "") for p in family.patterns):
            return family
    return None


def unmapped_reason(accelerator_model: str) -> str | None:
    """Why a name is in no family on purpose ([[none]]), or None where the file does not say."""
    for entry in _data().get("none", []):
        if (accelerator_model or "") in entry["names"]:
            return entry["reason"]
    return None


@dataclass(frozen=True)
class Placement:
    """Where a reference check of an accelerator goes: the family and the agents' queue key, or why nowhere."""

    family: str | None
    queue: str | None  # None: no agent can measure it (reason says why)
    reason: str = ""
    precision: str = "bf16"


@functools.lru_cache(maxsize=256)
def placement(accelerator_model: str) -> Placement:
    family = _family(accelerator_model)
    if family is None:
        reason = unmapped_reason(accelerator_model) or (
            f"the accelerator {accelerator_model!r} is in no family of leaderboard/catalogue/accelerators.toml"
        )
        return Placement(None, None, reason)
    if family.queue == NO_QUEUE:
        return Placement(family.name, None, family.reason or f"no agent measures {family.name}")
    return Placement(family.name, family.queue, precision=family.precision)


# Who makes an accelerator (or a processor) whose name is in no family: words that name the maker.
_MAKERS = (
    (re.compile(r"\b(nvidia|tesla|geforce|quadro|rtx)\b", re.I), "NVIDIA"),
    (re.compile(r"\b(amd|instinct|radeon|epyc)\b", re.I), "AMD"),
    (re.compile(r"\b(intel|xeon|gaudi|habana)", re.I), "Intel"),
    (re.compile(r"\b(google|tpu)", re.I), "Google"),
    (re.compile(r"\b(huawei|ascend)\b", re.I), "Huawei"),
    (re.compile(r"\b(graphcore|ipu)\b", re.I), "Graphcore"),
)


@functools.lru_cache(maxsize=256)
def vendor_of(model: str) -> str:
    """The maker of an accelerator or processor name: its family's first word (NVIDIA, AMD, Google), else
    the maker a word of the name gives away, else the name's first word ('' for no name)."""
    family = family_of(model or "")
    if family:
        return family.split()[0]
    for pattern, maker in _MAKERS:
        if pattern.search(model or ""):
            return maker
    words = (model or "").split()
    return words[0] if words else ""
