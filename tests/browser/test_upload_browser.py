"""A submitter uploads a bundle in the browser form, then reads its outcome on the submission page."""

import tarfile
import uuid
from urllib.parse import urlparse

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from submissions.synthetic.bundles import SystemSpec, write_bundle

from .conftest import screenshot
from .test_leaderboard_browser import open_page, wait


def _is_uuid(text: str) -> bool:
    try:
        uuid.UUID(text)
    except ValueError:
        return False
    return True


pytestmark = [pytest.mark.shared_rounds, pytest.mark.browser]


def test_a_submitter_logs_in_uploads_a_bundle_and_sees_it_validated(
    live_server, browser, tmp_path, django_db_blocker
):
    from django.contrib.auth import get_user_model

    from accounts.models import Membership, Organisation
    from submissions.models import Submission

    with django_db_blocker.unblock():
        user = get_user_model().objects.create_user("submitter", password="a-long-password-1")
        acme, _ = Organisation.objects.get_or_create(name="Acme")
        Membership.objects.create(user=user, organisation=acme)
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
    d.find_element(By.ID, "id_username").send_keys("submitter")
    d.find_element(By.ID, "id_password").send_keys("a-long-password-1")
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
        assert submission.uploaded_by.username == "submitter" and submission.status == "valid"
