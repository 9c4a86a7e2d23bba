"""Organisations across rounds: which submitter names are one organisation.

The same organisation submits as "Google Inc." one round and "Google" the next, as "Nvidia"
and "NVIDIA". `organisations.toml` lists, for each organisation, the names it was seen under;
`organisation_of(name)` gives the organisation a name belongs to (ignoring case, spaces and
punctuation), or the name itself when it is listed nowhere. Filters, progress across rounds,
compare and the API group by it; result and system pages show the name as submitted.

The lookup is pure (no Django); leaderboard/catalogue/rounds.py `refresh_submitters` re-files the Submitter
rows after the file changes (`manage.py load_rounds`).
"""

import functools
import tomllib
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

import icu

DATA_FILE = Path(__file__).resolve().parent / "organisations.toml"


def name_key(name: str) -> str:
    """What two names of one organisation share: letters and digits, case folded ("Intel_Corp" = "intel corp.")."""
    text = unicodedata.normalize("NFKC", name).casefold()
    return "".join(c for c in text if c.isalnum())


# Letters and digits a reader takes for one another once case is folded, which UTS #39 keeps apart.
_ASCII_LOOKALIKES = str.maketrans("01i", "oll")
SMALL_CAPITAL = "LATIN LETTER SMALL CAPITAL "


@functools.cache
def _spoof_checker() -> icu.SpoofChecker:
    return icu.SpoofChecker()


def skeleton(text: str) -> str:
    """Unicode's confusable skeleton of `text` (UTS #39, section 4, by ICU's SpoofChecker): each character
    replaced by the prototype it is confusable with, so that two strings a reader takes for each other
    have one skeleton ("Beta Or\u0261" and "Beta Org"; Cyrillic "\u0412" and "B")."""
    return _spoof_checker().getSkeleton(0, text)


def _plain_letters(text: str) -> str:
    """`text` without accents (NFKD, combining marks dropped: "\u1eb9" is "e") and with Latin small
    capitals as their letters ("\u0274" is "n"), which UTS #39 keeps apart from the letters they show."""
    out = []
    for c in unicodedata.normalize("NFKD", text):
        if unicodedata.combining(c):
            continue
        name = unicodedata.name(c, "")
        letter = name.removeprefix(SMALL_CAPITAL)
        out.append(letter.lower() if name.startswith(SMALL_CAPITAL) and len(letter) == 1 else c)
    return "".join(out)


def lookalike_key(name: str) -> str:
    """What two names that a reader could take for each other share: name_key (case, spaces and
    punctuation ignored) of the name's confusable skeleton (UTS #39: Cyrillic "\u0412" read as "B",
    "\u0261" as "g"), read without accents ("B\u1eb9ta" as "Beta") and with small capitals as their letters
    ("\u0274\u1d20\u026a\u1d05\u026a\u1d00" as "nvidia"), and with 0/o, 1/l/i, rn/m and vv/w taken as
    alike. "BETA ORG", "beta-org", "Beta Org." and "\u0412eta 0rg" all give "betaorg"'s key. Used where a
    name claims an organisation: an organisation's own name, a bundle's submitter."""
    text = unicodedata.normalize("NFKC", name).casefold()  # the skeleton tells "I" from "i"
    text = _plain_letters(skeleton(text))
    key = name_key(text).translate(_ASCII_LOOKALIKES)
    return key.replace("rn", "m").replace("vv", "w")


def clean(name: str) -> str:
    """A name as it is shown when it is its own organisation: spaces collapsed."""
    return " ".join(name.split())


@dataclass(frozen=True)
class Organisations:
    """The alias list, read: each name's key → its organisation's name."""

    by_key: dict[str, str] = field(default_factory=dict)

    def of(self, name: str) -> str:
        """The organisation `name` belongs to; the name itself (spaces collapsed) when it is not listed."""
        return self.by_key.get(name_key(name), clean(name))

    def knows(self, name: str) -> bool:
        return name_key(name) in self.by_key

    @property
    def names(self) -> list[str]:
        return sorted(set(self.by_key.values()), key=str.casefold)


def parse(data: dict, source: str = "organisations.toml") -> Organisations:
    """Read the parsed file's `[organisations]` table; a name listed under two organisations is an error."""
    table = data.get("organisations")
    if not isinstance(table, dict):
        raise ValueError(f"{source}: no [organisations] table")
    by_key: dict[str, str] = {}
    for organisation, names in table.items():
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise ValueError(f"{source}: {organisation!r} must list its names as strings")
        shown = clean(organisation)
        if not shown:
            raise ValueError(f"{source}: an organisation without a name")
        for name in [organisation, *names]:
            key = name_key(name)
            if not key:
                raise ValueError(
                    f"{source}: {organisation!r} lists {name!r}, which has no letters or digits"
                )
            other = by_key.get(key)
            if other is not None and other != shown:
                raise ValueError(f"{source}: {name!r} is listed under both {other!r} and {shown!r}")
            by_key[key] = shown
    return Organisations(by_key)


def read(path: Path = DATA_FILE) -> Organisations:
    with open(path, "rb") as f:
        return parse(tomllib.load(f), path.name)


@functools.cache
def shipped() -> Organisations:
    """The shipped alias list, read once per process."""
    return read()


def organisation_of(name: str) -> str:
    """The organisation a submitter name belongs to, by the shipped alias list."""
    return shipped().of(name)
