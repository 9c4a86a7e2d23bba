"""The bundles the tests build, for the tests of more than one module:

- bundle_bytes: a small valid bundle to upload, Acme's system "alpha" with five retinanet runs of
  training-v5.1, written by submissions.synthetic and packed as a .tgz in memory;
- bundle_with_broken_runs: the same bundle as a folder, with run_stop cut from some runs' logs;
- publish and log_url: Acme's alpha and beta ingested and published, and the address of a run's log;
- make_tar and info: a tar of given members (files, links, devices), for the tests of unpacking."""

import io
import tarfile
from pathlib import Path

from django.core.management import call_command

from submissions.models import Submission
from submissions.synthetic.bundles import SystemSpec, write_bundle

TARGETS = {"retinanet": 0.34, "rgat": 0.72}


def bundle_bytes(tmp_path, org="Acme", system="alpha"):
    root = write_bundle(
        tmp_path / org,
        org,
        [SystemSpec(system, results={"retinanet": [10.0, 12.0, 11.0, 13.0, 9.0]})],
        TARGETS,
    )
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        tar.add(root, arcname=org)
    return buffer.getvalue()


def bundle_with_broken_runs(tmp_path, broken=(2, 3)):
    """A valid bundle, then run_stop cut from the given runs' logs."""
    root = write_bundle(
        tmp_path,
        "Acme",
        [SystemSpec("alpha", results={"retinanet": [10.0, 11.0, 12.0, 13.0, 14.0]})],
        TARGETS,
    )
    for index in broken:
        log = root / "results" / "alpha" / "retinanet" / f"result_{index}.txt"
        lines = log.read_text().splitlines()
        log.write_text("\n".join(line for line in lines if '"run_stop"' not in line) + "\n")
    return root


def publish(tmp_path, archive: str | None = None) -> Submission:
    """Acme's alpha (published) and beta (held: two failed runs), ingested from a folder (stored as a plain
    tar) or, with archive="tgz", from a gzipped tar (stored as uploaded)."""
    systems = [
        SystemSpec("alpha", results={"retinanet": [10.0, 12.0, 11.0, 13.0, 9.0]}),
        SystemSpec("beta", results={"retinanet": [20.0, None, None, 22.0, 23.0]}),
    ]
    root = write_bundle(tmp_path / "src", "Acme", systems, TARGETS)
    path = root
    if archive == "tgz":
        path = tmp_path / "acme.tgz"
        with tarfile.open(path, "w:gz") as tar:
            tar.add(root, arcname="Acme")
    call_command(
        "ingest", str(path), "--round", "training-v5.1", "--wait", "--publish", stdout=io.StringIO()
    )
    return Submission.objects.get()


def log_url(system: str, index: int) -> str:
    return f"/r/training-v5.1/Acme/{system}/retinanet/log/{index}/"


# The tests' members are mostly random bytes, which no preset compresses: xz's fastest. For 10 MB of them
# its default preset 6 took 6.3 s of CPU, preset 0 1.6 s (gzip's levels took 0.26-0.27 s alike).
FASTEST = {"w:xz": {"preset": 0}}


def make_tar(path: Path, members, mode="w", format=tarfile.DEFAULT_FORMAT):
    """members: (name, bytes) for files, or ready TarInfo objects (links, devices, dirs)."""
    with tarfile.open(path, mode, format=format, **FASTEST.get(mode, {})) as tf:
        for m in members:
            if isinstance(m, tarfile.TarInfo):
                tf.addfile(m)
            else:
                name, data = m
                info = tarfile.TarInfo(name)
                info.size = len(data)
                tf.addfile(info, io.BytesIO(data))
    return path


def info(name, type_, **attrs):
    """A tar member of the given type (tarfile.SYMTYPE, FIFOTYPE ...) and attributes, for make_tar."""
    ti = tarfile.TarInfo(name)
    ti.type = type_
    for k, v in attrs.items():
        setattr(ti, k, v)
    return ti
