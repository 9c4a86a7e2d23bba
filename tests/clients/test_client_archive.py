"""The portal serves its submitters' client as a source archive that pip installs, and the upload
page gives that command, not a path in the repository."""

import io
import subprocess
import sys
import tarfile

import pytest

pytestmark = pytest.mark.django_db


@pytest.mark.django_db
def test_the_client_archive_installs_with_pip(client, tmp_path):
    response = client.get("/client/portal-submit.tar.gz")
    assert response.status_code == 200 and response["Content-Type"] == "application/gzip"
    with tarfile.open(fileobj=io.BytesIO(response.content)) as tar:
        names = tar.getnames()
    assert "portal-submit-1.0.0/pyproject.toml" in names
    assert "portal-submit-1.0.0/portal_submit/cli.py" in names
    archive = tmp_path / "portal-submit.tar.gz"
    archive.write_bytes(response.content)
    # Built with this environment's setuptools (no index needed), into a folder of its own.
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation"]
        + ["--target", str(tmp_path / "site"), str(archive)],
        check=True,
    )
    assert (tmp_path / "site" / "portal_submit" / "cli.py").is_file()


def test_the_upload_page_gives_the_sites_install_command(client, cast):
    client.force_login(cast["member_a"])
    html = client.get("/submissions/upload/").content.decode()
    assert "<code>pip install http://testserver/client/portal-submit.tar.gz</code>" in html
    assert "./clients/" not in html
