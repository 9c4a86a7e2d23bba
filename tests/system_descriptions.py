"""The system descriptions of the three shared rounds the tests read, straight from the tarballs (no
pipeline, no database): descriptions(tarball) gives each description as read and its table fields."""

import re
import tarfile
from pathlib import Path

from submissions.checking.bundles.layout import read_description
from submissions.checking.systems import fields_of

ROUNDS = {
    "v0.5": "training_v0.5_results.tar.xz",
    "v0.6": "training_v0.6_results.tar.xz",
    "v5.1": "training_v5.1_results.tar.xz",
}
# systems/<name>.json (v0.6 and later) and results/<system>/entry.json (v0.5, and Alibaba's v0.6).
DESCRIPTION = re.compile(r"(^|/)(systems/[^/]+\.json|results/[^/]+/entry\.json)$")


def descriptions(tarball: Path) -> dict[str, tuple[dict, dict, list[str]]]:
    """Bundle path -> (description as read, table fields, notes), for every description file in the tarball."""
    out = {}
    with tarfile.open(tarball) as tar:
        for member in tar:
            name = member.name.removeprefix("./")
            if not (member.isfile() and DESCRIPTION.search(name)):
                continue
            notes = []
            desc, _ = read_description(tar.extractfile(member).read(), name, notes)
            fmt = "entry.json" if name.endswith("/entry.json") else "system.json"
            out[name] = (desc, fields_of(desc, fmt), notes)
    return out
