"""Accelerator families: which chip a name that a submitter wrote belongs to.

`accelerators.toml` lists the families, each with the patterns of the names it covers. The
lookup is pure (no Django), for the plausibility checks, the table's filters and the agents.
"""

import functools
import re
import tomllib
from pathlib import Path

DATA_FILE = Path(__file__).resolve().parent / "accelerators.toml"


@functools.cache
def families() -> list[tuple[str, list[re.Pattern]]]:
    """(family name, compiled patterns), in the file's order: the first match wins."""
    with open(DATA_FILE, "rb") as f:
        data = tomllib.load(f)
    return [
        (family["name"], [re.compile(p, re.IGNORECASE) for p in family["patterns"]])
        for family in data.get("family", [])
    ]


@functools.lru_cache(maxsize=256)
def family_of(accelerator_model: str) -> str | None:
    """The family of an accelerator name: the first family one of whose patterns it matches; None for none."""
    for name, patterns in families():
        if any(p.search(accelerator_model or "") for p in patterns):
            return name
    return None
