"""Who sees a submission's pages (leaderboard/access/policy.py), for each role and phase of the round:
what a user may not see answers 404, exactly as a submission that does not exist."""

import uuid

import pytest

from leaderboard.access import policy, public
from leaderboard.models import Result
from submissions.models import Submission

from ..live_round import checked_submission, set_phase

pytestmark = pytest.mark.django_db

ROLES = ["member_a", "admin_a", "member_b", "reviewer", "staff", "outsider"]
# Who sees Acme's submission, in each phase of the round.
SEES_ACME = {
    "open": {"member_a", "admin_a", "reviewer", "staff"},
    "review": {"member_a", "admin_a", "member_b", "reviewer", "staff"},  # peer review
    "published": {"member_a", "admin_a", "reviewer", "staff"},
}


@pytest.fixture
def live(rounds, cast):
    round_ = rounds["training-v5.1"]
    round_.reviewers.add(cast["reviewer"])
    acme = checked_submission(round_, cast["a"], "Acme")
    checked_submission(round_, cast["b"], "Globex", "beta")
    return round_, acme


def pages(uid):
    return [
        f"/submissions/{uid}/",
        f"/submissions/{uid}/progress.json",
        f"/submissions/{uid}/findings.json",
    ]


@pytest.mark.parametrize("phase", SEES_ACME)
def test_each_role_sees_a_submission_only_where_it_may(client, live, cast, phase):
    round_, acme = live
    set_phase(round_, phase)
    for role in ROLES:
        client.force_login(cast[role])
        expected = 200 if role in SEES_ACME[phase] else 404
        for page in pages(acme.uid):
            assert client.get(page).status_code == expected, (role, phase, page)
        listed = client.get("/submissions/").content.decode()
        assert (acme.original_name in listed) == (role in SEES_ACME[phase]), (role, phase)


def test_a_hidden_submission_answers_as_one_that_does_not_exist(client, live, cast):
    round_, acme = live
    set_phase(round_, "open")
    client.force_login(cast["member_b"])
    hidden = client.get(f"/submissions/{acme.uid}/")
    missing = client.get(f"/submissions/{uuid.uuid4()}/")
    assert hidden.status_code == missing.status_code == 404
    assert hidden.content == missing.content


def test_anonymous_users_are_sent_to_log_in_and_see_nothing(client, live):
    _, acme = live
    for page in pages(acme.uid):
        response = client.get(page)
        assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_peer_review_is_for_the_organisations_that_submitted(rounds, cast):
    round_ = set_phase(rounds["training-v5.1"], "review")
    checked_submission(round_, cast["a"], "Acme")
    assert round_.pk in policy.viewer(cast["member_a"]).peer_rounds
    assert round_.pk not in policy.viewer(cast["member_b"]).peer_rounds  # Globex did not submit
    assert policy.viewer(cast["outsider"]).peer_rounds == frozenset()


def test_unpublished_results_of_a_live_round_stay_off_the_public_pages(client, live, cast):
    round_, acme = live
    set_phase(round_, "review")
    # Even marked published by some other path, nothing shows before the round's minute.
    acme.systems.update(published=True)
    Result.objects.filter(system__submission=acme).update(published=True)
    assert not public.results().filter(system__submission=acme).exists()
    for who in (None, cast["member_b"], cast["outsider"]):
        if who is None:
            client.logout()
        else:
            client.force_login(who)
        page = client.get("/r/training-v5.1/").content.decode()
        assert "alpha" not in page  # the round's table: the public's, for everyone
        system_page = client.get("/r/training-v5.1/Acme/alpha/")
        if who == cast["member_b"]:  # Globex reviews its peer's system, told it is not public
            assert system_page.status_code == 200 and "Not public" in system_page.content.decode()
        else:
            assert system_page.status_code == 404
    # Inside, peer review goes on: Acme's member reads both submissions of the round.
    assert (
        Submission.objects.filter(policy.viewer(cast["member_a"]).submission_filter()).count() == 2
    )


def test_the_api_lifts_the_embargo_when_published_not_when_it_was_imported(
    client, live, django_capture_on_commit_callbacks
):
    """The API's viewsets build their querysets once, when the module is imported: the embargo must
    compare publish_at with the clock when each query runs."""
    from submissions.checking.pipeline import publish_round

    round_, _ = live
    set_phase(round_, "review")
    client.logout()
    assert client.get("/api/v1/results/?round=training-v5.1").json()["count"] == 0  # imported
    with django_capture_on_commit_callbacks(execute=True):  # the caches follow
        publish_round(round_)  # by staff, now: publish_at becomes now, after the import
    assert client.get("/api/v1/results/?round=training-v5.1").json()["count"] == 2
    assert client.get("/api/v1/systems/?round=training-v5.1").json()["count"] == 2


def test_a_members_unpublished_run_log_is_theirs_to_read_only(client, live, cast):
    from leaderboard.models import Run

    round_, acme = live
    set_phase(round_, "open")
    result = Result.objects.get(system__submission=acme)
    run = Run.objects.create(
        result=result, index=1, path="Acme/results/alpha/retinanet/result_1.txt"
    )
    url = "/r/training-v5.1/Acme/alpha/retinanet/log/1/"
    # The test's bundle is not stored, so the log page itself says its bytes are missing (404); what
    # matters is whose request reaches the run at all.
    for who, sees in (
        ("member_a", True),
        ("reviewer", True),
        ("member_b", False),
        ("outsider", False),
    ):
        client.force_login(cast[who])
        response = client.get(url)
        reached = response.context is not None and "run" in response.context
        assert reached == sees and (not sees or response.context["run"].pk == run.pk), who
        assert sees or response.status_code == 404
        if sees:  # the result page's notice, and for this viewer only
            assert "<strong>Not public</strong>" in response.content.decode()
            assert _never_cached(response), who
    client.logout()
    response = client.get(url)
    assert response.status_code == 404 and "run" not in (response.context or {})


RESULT = "/r/training-v5.1/Acme/alpha/retinanet/"


def _never_cached(response) -> bool:
    cache_control = response.get("Cache-Control", "")
    return (
        "private" in cache_control
        and "no-store" in cache_control
        and not response.has_header("ETag")
    )


def test_a_members_unpublished_result_says_it_is_not_public_and_is_never_cached(
    client, live, cast, django_capture_on_commit_callbacks
):
    from leaderboard.catalogue import calendar
    from submissions.checking.pipeline import publish_round

    round_, acme = live
    set_phase(round_, "open")
    client.force_login(cast["member_a"])
    for path in (RESULT, RESULT + "?format=csv", "/r/training-v5.1/Acme/alpha/"):
        response = client.get(path)
        assert response.status_code == 200 and _never_cached(response), path
    page = client.get(RESULT).content.decode()
    when = calendar.when(round_.publish_at)
    assert f"<strong>Not public</strong>: publication on {when}." in page
    assert f'href="/submissions/{acme.uid}/"' in page  # its report, which this member may read
    system_page = client.get("/r/training-v5.1/Acme/alpha/").content.decode()
    assert f"not public: publication on {when}" in system_page
    round_page = client.get("/r/training-v5.1/").content.decode()
    assert RESULT not in round_page  # the public's table: it does not link the result
    submission_page = client.get(f"/submissions/{acme.uid}/").content.decode()
    assert f'href="{RESULT}"' in submission_page  # its submission's page does

    # Why it is not public follows the result: withdrawn, held by a blocking finding.
    result = Result.objects.get(system__submission=acme)
    Result.objects.filter(pk=result.pk).update(withdrawn=True)
    assert "<strong>Not public</strong>: withdrawn" in client.get(RESULT).content.decode()
    Result.objects.filter(pk=result.pk).update(withdrawn=False, error_count=1)
    assert "Not public</strong>: held by a blocking finding" in client.get(RESULT).content.decode()
    Result.objects.filter(pk=result.pk).update(error_count=0)

    # Before publication no one else reaches it; after, everyone does, with no notice.
    client.logout()
    assert client.get(RESULT).status_code == 404
    for who in ("member_b", "outsider"):
        client.force_login(cast[who])
        assert client.get(RESULT).status_code == 404, who
    with django_capture_on_commit_callbacks(execute=True):
        publish_round(round_)
    for who in ("outsider", "member_a"):
        client.force_login(cast[who])
        response = client.get(RESULT)
        assert response.status_code == 200 and "Not public" not in response.content.decode()
        assert "no-store" not in response.get("Cache-Control", ""), who
