"""The submitters' client (clients/portal-submit) as a source archive served by the portal itself,
so that its install command names this site, not a folder of the repository:

    pip install https://<this site>/client/portal-submit.tar.gz

The archive is built from the folder on the first request of each process (a few files, a few
KB) and kept; pip builds and installs it as it would a release from an index.
"""

import functools
import gzip
import io
import tarfile
import tomllib
from pathlib import Path

from django.conf import settings
from django.http import Http404, HttpResponse
from django.views.decorators.http import require_safe

ARCHIVE_NAME = "portal-submit.tar.gz"


def client_folder() -> Path:
    return Path(settings.BASE_DIR) / "clients" / "portal-submit"


@functools.cache
def source_archive() -> bytes:
    """The client's folder as an sdist: <name>-<version>/ holding pyproject.toml, the README and the
    package's modules (no caches, no build output)."""
    folder = client_folder()
    project = tomllib.loads((folder / "pyproject.toml").read_text())["project"]
    top = f"{project['name']}-{project['version']}"
    files = [folder / "pyproject.toml", folder / "README.md"]
    files += sorted((folder / "portal_submit").glob("*.py"))
    out = io.BytesIO()
    with gzip.GzipFile(fileobj=out, mode="wb", mtime=0) as packed:
        with tarfile.open(fileobj=packed, mode="w") as tar:
            for path in files:
                data = path.read_bytes()
                info = tarfile.TarInfo(f"{top}/{path.relative_to(folder).as_posix()}")
                info.size, info.mode = len(data), 0o644
                tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


@require_safe
def client_archive(request):
    if not (client_folder() / "pyproject.toml").is_file():
        raise Http404("The client's sources are not part of this installation.")
    response = HttpResponse(source_archive(), content_type="application/gzip")
    response["Content-Disposition"] = f'attachment; filename="{ARCHIVE_NAME}"'
    return response
