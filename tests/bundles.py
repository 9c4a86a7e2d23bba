"""A small valid bundle for the tests that upload one: Acme's system "alpha" with five retinanet runs
of training-v5.1, written by submissions.synthetic and packed as a .tgz in memory."""

import io
import tarfile

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
