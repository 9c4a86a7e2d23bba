"""Publication per result, public ids, and the RCP factor the portal computes (tasks run in-process)."""

import io
import json
import shutil
import tarfile

import pytest
from django.core.management import CommandError, call_command

from leaderboard.models import Result
from submissions.models import Finding, Submission
from submissions.synthetic.bundles import SystemSpec, write_bundle

from ...conftest import shared_plain_tar

# Every test here commits its writes: eager tasks run in on_commit hooks.
pytestmark = [pytest.mark.usefixtures("eager"), pytest.mark.django_db(transaction=True)]

TARGETS = {"retinanet": 0.34, "rgat": 0.72, "llama31_405b": 5.6}


def ingest(path, *extra, round_key="training-v5.1"):
    """Ingest and wait; (the newest submission, what the command printed, including why it did not pass)."""
    out = io.StringIO()
    try:
        call_command("ingest", str(path), "--round", round_key, "--wait", *extra, stdout=out)
    except CommandError as error:
        out.write(f"CommandError: {error}\n")
    return Submission.objects.order_by("-pk").first(), out.getvalue()


def acme(tmp_path, name="v1", beta_runs=(20.0, None, None, 22.0, 23.0)):
    """Acme with a sound alpha and a beta/retinanet whose two failed runs leave it without a score."""
    systems = [
        SystemSpec(
            "alpha",
            results={
                "retinanet": [10.0, 12.0, 11.0, 13.0, 9.0],
                "llama31_405b": [100.0, 90.0, 95.0],
            },
        ),
        SystemSpec("beta", results={"retinanet": list(beta_runs), "rgat": [5.0] * 10}),
    ]
    return write_bundle(tmp_path / name, "Acme", systems, TARGETS)


def public_results(submission):
    return set(
        Result.objects.filter(system__submission=submission, published=True).values_list(
            "system__key", "benchmark__key"
        )
    )


def test_one_held_result_does_not_hold_back_the_others(rounds, tmp_path):
    submission, out = ingest(acme(tmp_path), "--publish")
    assert submission.status == Submission.Status.PUBLISHED, submission.message
    assert public_results(submission) == {
        ("alpha", "retinanet"),
        ("alpha", "llama31_405b"),
        ("beta", "rgat"),
    }
    assert "Public: 3 of 4 results; 1 held." in submission.message
    assert "3 of 4 results publishable; 1 held:" in out
    assert "held: beta/retinanet:" in out  # with the finding that holds it
    held = Result.objects.get(system__key="beta", benchmark__key="retinanet")
    assert held.score_s is None and not held.published and held.public_id is None
    assert (
        held.score_message
        == "2 of 5 runs failed; at most 1 may fail. Why: run.not-successful (2 runs): run_stop status "
        "is 'aborted'."
    )
    assert Finding.objects.filter(result=held, severity="error").exists()


def test_the_submission_page_counts_the_publishable_results_and_lists_the_held_one(
    client, rounds, cast, tmp_path
):
    submission, _ = ingest(acme(tmp_path))
    client.force_login(cast["staff"])
    page = client.get(f"/submissions/{submission.uid}/").content.decode()
    assert "3 of 4 results can be published; 1 held by a blocking finding." in page
    held = page[page.index('id="held"') : page.index("</table>", page.index('id="held"'))]
    assert "beta/retinanet" in held and "alpha/" not in held


def test_a_submission_with_nothing_publishable_is_not_published(rounds, tmp_path):
    bundle = write_bundle(
        tmp_path,
        "Acme",
        [SystemSpec("beta", results={"retinanet": [20.0, None, None, 22.0, 23.0]})],
        TARGETS,
    )
    submission, out = ingest(bundle, "--publish")
    assert submission.status == Submission.Status.INVALID
    assert "1 of 1 submissions did not pass" in out and "held: beta/retinanet:" in out
    assert not Result.objects.filter(published=True).exists()


def test_public_ids_are_given_at_publication_and_never_reused(client, rounds, tmp_path):
    first, _ = ingest(acme(tmp_path, "v1"), "--publish")
    ids = dict(
        Result.objects.filter(system__submission=first, published=True).values_list(
            "public_id", "benchmark__key"
        )
    )
    assert sorted(ids) == ["5.1-0001", "5.1-0002", "5.1-0003"]
    response = client.get("/id/5.1-0001")
    assert response.status_code == 302 and response["Location"].startswith(
        "/r/training-v5.1/Acme/alpha/"
    )
    assert "5.1-0001" in client.get(response["Location"]).content.decode()

    second, out = ingest(
        acme(tmp_path, "v2", beta_runs=(20.0, 21.0, None, 22.0, 23.0)), "--publish"
    )
    first.refresh_from_db()
    assert first.status == Submission.Status.WITHDRAWN
    assert first.message == f"Replaced by {second.uid}, a later submission of Acme for this round."
    # The withdrawn results keep their ids; the new ones continue the sequence.
    assert sorted(
        Result.objects.filter(system__submission=first)
        .exclude(public_id=None)
        .values_list("public_id", flat=True)
    ) == sorted(ids)
    assert sorted(
        Result.objects.filter(system__submission=second).values_list("public_id", flat=True)
    ) == ["5.1-0004", "5.1-0005", "5.1-0006", "5.1-0007"]
    assert client.get("/id/5.1-0001").status_code == 404  # withdrawn
    assert client.get("/id/5.1-0004").status_code == 302


def test_publishing_replaces_only_the_same_submitters_earlier_submission(rounds, tmp_path):
    acme_v1, _ = ingest(acme(tmp_path, "v1"), "--publish")
    bolt, _ = ingest(
        write_bundle(
            tmp_path / "bolt", "Bolt", [SystemSpec("gamma", results={"rgat": [5.0] * 10})], TARGETS
        ),
        "--publish",
    )
    acme_v1.refresh_from_db()
    assert (acme_v1.status, bolt.status) == ("published", "published")


def test_exports_and_the_api_carry_the_public_id(client, rounds, tmp_path):
    ingest(acme(tmp_path), "--publish")
    api = client.get("/api/v1/results/?round=training-v5.1").json()
    rows = api["results"] if isinstance(api, dict) else api
    assert sorted(r["public_id"] for r in rows) == ["5.1-0001", "5.1-0002", "5.1-0003"]
    from leaderboard.models import Round
    from leaderboard.roundtable.exports import results_frame

    frame = results_frame(Round.objects.get(key="training-v5.1"))
    assert sorted(frame["public_id"]) == ["5.1-0001", "5.1-0002", "5.1-0003"]


# --- The RCP factor: the portal's, never the bundle's ---

DELL_RGAT = "Dell/results/1xXE9680x8H200-SXM-141GB/rgat"
DELL_SYSTEM = "Dell/systems/1xXE9680x8H200-SXM-141GB.json"


@pytest.fixture(scope="module")
def dell_rgat(tmp_path_factory):
    """Dell's v5.1 rgat result (its ten logs and scaling.json) and its system description, from the shared round."""
    folder = tmp_path_factory.mktemp("dell")
    with tarfile.open(shared_plain_tar("training_v5.1_results.tar.xz")) as tar:
        for member in tar:
            name = member.name.removeprefix("./")
            if member.isfile() and (name.startswith(DELL_RGAT + "/") or name == DELL_SYSTEM):
                target = folder / "original" / name
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(tar.extractfile(member).read())
    return folder / "original" / "Dell"


@pytest.mark.shared_rounds
def test_the_score_uses_the_portals_rcp_factor_not_scaling_json(rounds, dell_rgat, tmp_path):
    claimed = json.loads((dell_rgat.parent / DELL_RGAT / "scaling.json").read_text())[
        "scaling_factor"
    ]
    original, _ = ingest(dell_rgat)
    result = Result.objects.get(system__submission=original)
    assert result.claimed_scaling_factor == pytest.approx(claimed)
    assert result.scaling_factor == pytest.approx(
        claimed, rel=1e-3
    )  # the portal computes what Dell wrote

    forged = tmp_path / "forged" / "Dell"
    shutil.copytree(dell_rgat, forged)
    (forged.parent / DELL_RGAT / "scaling.json").write_text(json.dumps({"scaling_factor": 0.5}))
    forged_submission, _ = ingest(forged)
    forged_result = Result.objects.get(system__submission=forged_submission)
    assert forged_result.score_s == pytest.approx(result.score_s)
    assert forged_result.claimed_scaling_factor == 0.5
    finding = Finding.objects.get(result=forged_result, rule="result.rcp-scaling")
    assert (
        "scaling.json says 0.5" in finding.message
        and f"{result.scaling_factor:.6g}" in finding.message
    )
