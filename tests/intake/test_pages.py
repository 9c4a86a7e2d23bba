"""Pages: upload in the browser form, the submission page, the round table, result and system pages."""

import gzip

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command

from submissions.models import Submission
from submissions.synthetic.bundles import SystemSpec, write_bundle

from .. import leaderboard_factories as make
from ..bundles import TARGETS, bundle_bytes

# Every test here commits its writes: eager tasks run in on_commit hooks.
pytestmark = [pytest.mark.usefixtures("eager"), pytest.mark.django_db(transaction=True)]


def test_upload_needs_a_login(client, rounds):
    response = client.get("/submissions/upload/")
    assert (
        response.status_code == 302
        and response["Location"] == "/accounts/login/?next=/submissions/upload/"
    )


def test_a_submitter_who_is_not_staff_can_log_in(client, cast):
    response = client.post(
        "/accounts/login/?next=/submissions/upload/", {"username": "member_a", "password": "pw"}
    )
    assert response.status_code == 302 and response["Location"] == "/submissions/upload/"
    assert client.get("/submissions/upload/").status_code == 200


def test_upload_creates_a_submission_and_shows_its_outcome(client, rounds, cast, tmp_path):
    client.force_login(cast["member_a"])
    data = bundle_bytes(tmp_path)
    response = client.post(
        "/submissions/upload/",
        {
            "round": "training-v5.1",
            "bundle": SimpleUploadedFile("acme.tgz", data),
        },
    )
    submission = Submission.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/submissions/{submission.uid}/"
    assert submission.uploaded_by == cast["member_a"] and submission.size == len(data)
    page = client.get(response["Location"]).content.decode()
    assert "Valid" in page and "checked 5 of 5 runs" in page
    progress = client.get(f"/submissions/{submission.uid}/progress.json").json()
    steps = {step["code"]: (step["state"], step["detail"]) for step in progress.pop("steps")}
    assert steps["checked"] == ("done", "checked 5 of 5 runs")
    assert steps["scored"] == ("done", "1 of 1 results can be published.")
    assert progress == {
        "status": "valid",
        "status_label": "Valid",
        "runs_total": 5,
        "runs_checked": 5,
        "final": True,
        "message": submission.message,
    }


def test_the_upload_form_says_what_a_wrong_file_is(client, rounds, cast):
    client.force_login(cast["member_a"])
    response = client.post(
        "/submissions/upload/",
        {
            "round": "training-v5.1",
            "bundle": SimpleUploadedFile("log.txt", b"x"),
        },
    )
    assert response.status_code == 200
    assert "“log.txt” is not a bundle" in response.content.decode()
    assert not Submission.objects.exists()


def test_others_cannot_see_a_submission_but_reviewers_can(client, rounds, cast, tmp_path):
    client.force_login(cast["member_a"])
    client.post(
        "/submissions/upload/",
        {"round": "training-v5.1", "bundle": SimpleUploadedFile("a.tgz", bundle_bytes(tmp_path))},
    )
    uid = Submission.objects.get().uid
    client.force_login(cast["member_b"])
    assert client.get(f"/submissions/{uid}/").status_code == 404  # as if it were not there
    assert client.get(f"/submissions/{uid}/progress.json").status_code == 404
    assert "a.tgz" not in client.get("/submissions/").content.decode()
    client.force_login(cast["staff"])
    assert client.get(f"/submissions/{uid}/").status_code == 200


def publish(tmp_path, org="Acme", system="alpha"):
    path = tmp_path / f"{org}.tgz"
    path.write_bytes(bundle_bytes(tmp_path, org, system))
    call_command("ingest", str(path), "--round", "training-v5.1", "--publish")


def test_the_round_table_shows_published_results_only(client, rounds, tmp_path):
    publish(tmp_path)
    call_command(
        "ingest",
        str(
            write_bundle(
                tmp_path / "hidden",
                "Hidden",
                [SystemSpec("zeta", results={"retinanet": [1.0] * 5})],
                TARGETS,
            )
        ),
        "--round",
        "training-v5.1",
    )
    page = client.get("/r/training-v5.1/").content.decode()
    # The availability cell: a short form, and MLCommons' words on focus (roundtable/htmlrows.py).
    assert "Closed division" in page and '<span class="f">Available on-premise</span>' in page
    assert ">alpha<" in page.replace("\n", "") or "alpha</a>" in page
    assert "11.00" in page
    assert "Hidden" not in page and "zeta" not in page


def test_the_round_table_toggles_speedups_where_the_round_has_reference_times(client, rounds):
    offer = 'name="show" value="speedup"'
    # A round with results: one without shows MLCommons' link instead of its table.
    make.result(make.system(rounds["training-v0.5"], "Google", "tpu"), "resnet", 300)
    assert offer in client.get("/r/training-v0.5/").content.decode()
    assert offer not in client.get("/r/training-v5.1/").content.decode()


def test_the_result_page_lists_runs_with_the_dropped_two_marked(client, rounds, tmp_path):
    publish(tmp_path)
    page = client.get("/r/training-v5.1/Acme/alpha/retinanet/").content.decode()
    assert page.count('class="dropped"') == 2
    assert page.count("counted</td>") == 3
    assert "11.00 minutes" in page


def test_the_system_page_lists_its_results(client, rounds, tmp_path):
    publish(tmp_path)
    page = client.get("/r/training-v5.1/Acme/alpha/").content.decode()
    assert "Acme: alpha" in page and "RetinaNet" in page


def test_unpublished_results_have_no_public_page(client, rounds, tmp_path):
    call_command(
        "ingest",
        str(
            write_bundle(
                tmp_path, "Hidden", [SystemSpec("zeta", results={"retinanet": [1.0] * 5})], TARGETS
            )
        ),
        "--round",
        "training-v5.1",
    )
    assert client.get("/r/training-v5.1/Hidden/zeta/retinanet/").status_code == 404
    assert client.get("/r/training-v5.1/Hidden/zeta/").status_code == 404


@pytest.mark.parametrize(
    "path",
    ["/", "/rounds/", "/r/training-v5.1/Acme/alpha/", "/r/training-v5.1/Acme/alpha/retinanet/"],
)
def test_pages_are_gzipped_for_a_client_that_takes_gzip(client, rounds, tmp_path, path):
    publish(tmp_path)
    plain = client.get(path)
    packed = client.get(path, HTTP_ACCEPT_ENCODING="gzip, deflate, br")
    assert plain.status_code == packed.status_code == 200
    assert "Content-Encoding" not in plain
    assert packed["Content-Encoding"] == "gzip" and "Accept-Encoding" in packed["Vary"]
    body = gzip.decompress(packed.content)
    assert len(packed.content) < len(body)
    assert b"alpha" in body or path in ("/", "/rounds/")
