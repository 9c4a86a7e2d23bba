"""Fuzz the unpacker: the input is an uploaded archive (tar, tar.gz, tar.xz, zip, or anything else).

open_bundle checks it as the pipeline does (a plain tar is indexed in place, a compressed one decompressed
into one plain tar in a scratch folder and indexed there, anything else unpacked into it), under small limits so that an input costs milliseconds. BundleError is the refusal
expected; any other exception is a crash. What is accepted must hold to the limits, lie inside the scratch
folder, and read back through the layout (LayoutError being the layout's refusal).
"""

import io
import os
import shutil
import sys
import tarfile
import zipfile

from _harness import SCRATCH, instrumented, main

with instrumented():
    from submissions.checking.bundles import (
        BundleError,
        FolderFiles,
        LayoutError,
        Limits,
        TarFiles,
        detect,
        open_bundle,
    )

LIMITS = Limits(max_total_bytes=1 << 20, max_files=64, max_file_bytes=256 << 10, max_ratio=200.0)
ARCHIVE = SCRATCH / "upload.bin"
DEST = SCRATCH / "unpacked"
LOG = b':::MLLOG {"time_ms": 1, "key": "run_start", "value": null, "metadata": {}}\n'
MEMBERS = [
    ("Acme/systems/s.json", b'{"number_of_nodes": "1"}'),
    ("Acme/results/s/rgat/result_0.txt", LOG),
    ("Acme/results/s/rgat/scaling.json", b'{"scaling_factor": 1.0}'),
]


def _tar(mode: str) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode=mode) as tar:
        for name, data in MEMBERS:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        link = tarfile.TarInfo("Acme/link")
        link.type, link.linkname = tarfile.SYMTYPE, "../x"
        if mode == "w:":
            tar.addfile(link)
    return out.getvalue()


def _zip() -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in MEMBERS:
            zf.writestr(name, data)
    return out.getvalue()


def seeds() -> list[bytes]:
    return [_tar("w:"), _tar("w:gz"), _tar("w:xz"), _zip(), b"hello"]


def test_one_input(data: bytes) -> None:
    ARCHIVE.write_bytes(data)
    shutil.rmtree(DEST, ignore_errors=True)
    try:
        files = open_bundle(ARCHIVE, DEST, LIMITS)
    except BundleError as error:
        assert error.rule.startswith("bundle."), error.rule
        assert not os.path.exists(DEST) or not os.listdir(DEST), (
            "a refused bundle left files behind"
        )
        return
    if isinstance(files, TarFiles):
        assert files.archive == str(ARCHIVE) or os.path.dirname(files.archive) == str(DEST)
        assert len(files.files) <= LIMITS.max_files
        tar_bytes = os.path.getsize(files.archive)
        assert all(offset + size <= tar_bytes for offset, size in files.files.values())
    else:
        assert isinstance(files, FolderFiles)
        real = os.path.realpath(DEST)
        for folder, _, names in os.walk(DEST):
            for name in names:
                path = os.path.join(folder, name)
                assert os.path.realpath(path).startswith(real + os.sep) and not os.path.islink(
                    path
                ), path
    try:
        detect(files)
    except LayoutError:
        pass
    finally:
        shutil.rmtree(DEST, ignore_errors=True)


if __name__ == "__main__":
    sys.setrecursionlimit(1000)
    main(seeds, test_one_input)
