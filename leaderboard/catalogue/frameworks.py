"""Software families: which frameworks a system's software text names (leaderboard/catalogue/frameworks.toml).

Unlike an accelerator, which is one chip, a system's software often names several frameworks
("NeMo, PyTorch, DGL"): `families_of` returns every family it matches. Pure (no Django).
"""

import functools
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

DATA_FILE = Path(__file__).resolve().parent / "frameworks.toml"


@dataclass(frozen=True)
class Family:
    name: str
    patterns: tuple[re.Pattern, ...]
    names: tuple[str, ...]  # the exact software texts of the published rounds that it covers


@functools.cache
def family_table() -> tuple[Family, ...]:
    with open(DATA_FILE, "rb") as f:
        data = tomllib.load(f)
    return tuple(
        Family(
            name=family["name"],
            patterns=tuple(re.compile(p, re.IGNORECASE) for p in family["patterns"]),
            names=tuple(family.get("names", ())),
        )
        for family in data.get("family", [])
    )


@functools.lru_cache(maxsize=512)
def families_of(framework: str) -> tuple[str, ...]:
    """Every family whose patterns the software text matches, in the file's order."""
    return tuple(
        f.name for f in family_table() if any(p.search(framework or "") for p in f.patterns)
    )
