"""What every fuzz target shares: its seeds written into an empty corpus folder, then atheris (libFuzzer).

A target is a script `tests/fuzz/fuzz_<name>.py` with `seeds()` (small inputs built here, never the
shared round archives) and `test_one_input(data)`; it calls `main(seeds, test_one_input)`. Arguments
are libFuzzer's: `python tests/fuzz/fuzz_logs.py CORPUS_DIR -max_total_time=20`. bin/fuzz.py runs
every target for a bounded time and reports executions and crashes.
"""

import os
import sys
import tempfile
from pathlib import Path

import atheris

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(REPO))

# Where inputs that are files on disk are written (each target removes its own after each input): the
# runner's folder, which it removes; else one in memory, where there is a tmpfs. libFuzzer ends the process
# with exit(), so no Python clean-up would run.
SCRATCH = Path(
    os.environ.get("FUZZ_SCRATCH")
    or tempfile.mkdtemp(prefix="fuzz-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
)
SCRATCH.mkdir(parents=True, exist_ok=True)


def instrumented():
    """Import the portal's modules inside this block so that atheris sees which branches an input takes."""
    return atheris.instrument_imports(include=["submissions"])


def _write_seeds(corpus: Path, seeds: list[bytes]) -> None:
    corpus.mkdir(parents=True, exist_ok=True)
    if any(corpus.iterdir()):
        return  # a corpus grown by earlier runs is kept as it is
    for i, seed in enumerate(seeds):
        (corpus / f"seed-{i:03d}").write_bytes(seed)


def main(seeds, test_one_input) -> None:
    corpora = [Path(a) for a in sys.argv[1:] if not a.startswith("-")]
    for corpus in corpora[:1]:  # libFuzzer writes new inputs into the first corpus folder
        if not corpus.is_file():  # a file: one input run again (a crash being looked at)
            _write_seeds(corpus, seeds())
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()
