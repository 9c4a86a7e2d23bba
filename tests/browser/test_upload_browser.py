"""A submitter uploads a bundle in the browser form, then reads its outcome on the submission page."""

import tarfile
import uuid
from urllib.parse import urlparse

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from submissions.synthetic.bundles import SystemSpec, write_bundle

from .conftest import screenshot
from .pages import open_page, wait


def _is_uuid(text: str) -> bool:
    try:
        uuid.UUID(text)
    except ValueError:
        return False
    return True


pytestmark = [pytest.mark.shared_rounds, pytest.mark.browser]


@pytest.fixture
def v51_open(live_server, django_db_blocker):
    """v5.1 open for submission while the test runs (the shared catalogue imports it as published
    history, which the upload form offers to staff only), its calendar put back after."""
    from leaderboard.models import Round

    from ..live_round import set_phase

    fields = ("opens_at", "deadline_at", "review_ends_at", "publish_at")
    with django_db_blocker.unblock():
        round_ = Round.objects.get(key="training-v5.1")
        saved = {f: getattr(round_, f) for f in fields}
        set_phase(round_, "open")
    yield
    with django_db_blocker.unblock():
        Round.objects.filter(pk=round_.pk).update(**saved)


def test_a_submitter_logs_in_uploads_a_bundle_and_sees_it_validated(
    live_server, browser, tmp_path, django_db_blocker, v51_open, cast
):
    from submissions.models import Submission

    root = write_bundle(
        tmp_path,
        "Acme",
        [SystemSpec("alpha", results={"retinanet": [10.0, 11.0, 12.0, 13.0, 14.0]})],
        {"retinanet": 0.34},
    )
    bundle = tmp_path / "acme.tgz"
    with tarfile.open(bundle, "w:gz") as tar:
        tar.add(root, arcname="Acme")

    d = browser
    open_page(d, f"{live_server.url}/submissions/upload/")  # not logged in: sent to the login page
    assert "/accounts/login/" in d.current_url
    d.find_element(By.ID, "id_username").send_keys("member_a")  # of Acme, in the cast
    d.find_element(By.ID, "id_password").send_keys("pw")
    d.find_element(By.CSS_SELECTOR, "main button[type=submit]").click()
    wait(d, lambda d: urlparse(d.current_url).path == "/submissions/upload/")

    Select(d.find_element(By.ID, "id_round")).select_by_value("training-v5.1")
    d.find_element(By.ID, "id_bundle").send_keys(str(bundle))
    d.find_element(By.CSS_SELECTOR, "main button[type=submit]").click()
    wait(
        d,
        lambda d: (
            "/submissions/" in d.current_url and _is_uuid(d.current_url.rstrip("/").split("/")[-1])
        ),
    )
    wait(d, lambda d: "Valid" in d.find_element(By.CSS_SELECTOR, "[data-field=status_label]").text)
    text = d.find_element(By.TAG_NAME, "main").text
    assert "checked 5 of 5 runs" in text
    assert "Acme" in text and "retinanet" in text
    screenshot(d, "10-submission-validated")

    with django_db_blocker.unblock():
        submission = Submission.objects.get(original_name="acme.tgz")
        assert submission.uploaded_by == cast["member_a"] and submission.status == "valid"


def test_an_upload_cut_off_before_a_reload_goes_on_from_the_offset_the_portal_holds(
    live_server, browser, tmp_path, django_db_blocker, v51_open, cast
):
    """Half of the bundle went up before the page was closed (here: sent through the API); the page, shown
    the same file again, asks the offset, sends the rest and completes that same upload."""
    import hashlib

    import requests

    from accounts.models import ApiToken
    from submissions.models import Upload

    with django_db_blocker.unblock():
        key = ApiToken.create(cast["member_a"], "half")[1]
    root = write_bundle(
        tmp_path,
        "Acme",
        [SystemSpec("beta", results={"retinanet": [10.0, 11.0, 12.0, 13.0, 14.0]})],
        {"retinanet": 0.34},
    )
    bundle = tmp_path / "acme-beta.tgz"
    with tarfile.open(bundle, "w:gz") as tar:
        tar.add(root, arcname="Acme")
    data = bundle.read_bytes()
    api = requests.Session()
    api.headers["Authorization"] = f"Token {key}"
    uid = api.post(
        f"{live_server.url}/api/v1/uploads/",
        json={"round": "training-v5.1", "name": bundle.name, "size": len(data)},
    ).json()["uid"]
    half = len(data) // 2
    sent = api.patch(
        f"{live_server.url}/api/v1/uploads/{uid}/",
        data=data[:half],
        headers={"Upload-Offset": "0", "Content-Type": "application/offset+octet-stream"},
    )
    assert sent.headers["Upload-Offset"] == str(half)

    d = browser
    open_page(d, f"{live_server.url}/submissions/upload/")
    if "/accounts/login/" in d.current_url:
        d.find_element(By.ID, "id_username").send_keys("member_a")
        d.find_element(By.ID, "id_password").send_keys("pw")
        d.find_element(By.CSS_SELECTOR, "main button[type=submit]").click()
        wait(d, lambda d: urlparse(d.current_url).path == "/submissions/upload/")
    Select(d.find_element(By.ID, "id_round")).select_by_value("training-v5.1")
    d.find_element(By.ID, "id_bundle").send_keys(str(bundle))
    # What the page kept when it was closed: this file's upload id, under the key it files it by.
    d.execute_script(
        "const f = document.getElementById('id_bundle').files[0];"
        "localStorage.setItem(`portal-upload:training-v5.1:${f.name}:${f.size}:${f.lastModified}`, arguments[0]);",
        uid,
    )
    d.find_element(By.CSS_SELECTOR, "main button[type=submit]").click()
    wait(
        d,
        lambda d: (
            "/submissions/" in d.current_url and _is_uuid(d.current_url.rstrip("/").split("/")[-1])
        ),
    )
    wait(d, lambda d: "Valid" in d.find_element(By.CSS_SELECTOR, "[data-field=status_label]").text)
    with django_db_blocker.unblock():
        upload = Upload.objects.select_related("submission").get(uid=uid)
        assert upload.status == "complete" and upload.offset == len(data)
        assert upload.submission.sha256 == hashlib.sha256(data).hexdigest()
        assert Upload.objects.filter(name=bundle.name).count() == 1  # no second upload was started
    # Only the upload's own keys: another page of the origin keeps its own (Django's {"theme": "auto"}).
    assert (
        d.execute_script(
            "return Object.keys(localStorage).filter(k => k.startsWith('portal-upload:')).length"
        )
        == 0
    )
