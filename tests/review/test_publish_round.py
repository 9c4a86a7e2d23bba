"""Publishing a live round at its minute (publish_due_rounds, with `now` passed in) or by staff."""

from datetime import timedelta

import pytest
from django.utils import timezone

from audit.models import AuditEvent
from leaderboard.access import public
from leaderboard.models import Result
from submissions.checking.pipeline import publish_due_rounds, publish_round
from submissions.checking.pipeline.publication import final_submissions
from submissions.models import Submission

from ..live_round import checked_submission, set_phase

pytestmark = pytest.mark.django_db

MINUTE = timedelta(minutes=1)


@pytest.fixture
def live(rounds, cast):
    round_ = set_phase(rounds["training-v5.1"], "review")
    acme = checked_submission(round_, cast["a"], "Acme")
    globex = checked_submission(round_, cast["b"], "Globex", "beta")
    return round_, acme, globex


def test_nothing_is_published_before_the_minute_and_everything_at_it(live):
    round_, acme, globex = live
    minute = round_.publish_at
    assert publish_due_rounds(minute - timedelta(seconds=1)) == []
    assert not Result.objects.filter(published=True).exists()
    assert publish_due_rounds(minute) == ["training-v5.1"]
    published = Result.objects.filter(system__round=round_, published=True)
    assert published.count() == 2 and all(r.public_id for r in published)
    round_.refresh_from_db()
    assert round_.published_at == minute
    assert {s.status for s in Submission.objects.all()} == {Submission.Status.PUBLISHED}
    event = AuditEvent.objects.get(action="round.published")
    assert event.round_key == "training-v5.1" and event.details["results"] == 2


def test_public_results_appear_at_the_minute_for_anonymous_readers(
    client, live, django_capture_on_commit_callbacks
):
    round_, _, _ = live
    assert "alpha" not in client.get("/r/training-v5.1/").content.decode()
    publish_due_rounds(timezone.now())  # the minute is 20 h away: nothing
    assert "alpha" not in client.get("/r/training-v5.1/").content.decode()
    round_.publish_at = timezone.now() - MINUTE
    round_.save(update_fields=["publish_at"])
    with django_capture_on_commit_callbacks(execute=True):  # the cached table is dropped on commit
        publish_due_rounds(timezone.now())
    page = client.get("/r/training-v5.1/").content.decode()
    assert "alpha" in page and "beta" in page


def test_publishing_twice_changes_nothing(live):
    round_, _, _ = live
    assert publish_round(round_, now=round_.publish_at) == 2
    ids = sorted(Result.objects.values_list("public_id", flat=True))
    assert publish_round(round_, now=round_.publish_at + MINUTE) is None
    assert publish_due_rounds(round_.publish_at + 2 * MINUTE) == []
    assert sorted(Result.objects.values_list("public_id", flat=True)) == ids
    assert AuditEvent.objects.filter(action="round.published").count() == 1


def test_staff_publishing_early_lifts_the_embargo_then(live, cast):
    round_, _, _ = live
    now = timezone.now()
    publish_round(round_, actor=cast["staff"], now=now)
    round_.refresh_from_db()
    assert round_.publish_at == now
    assert public.results().filter(system__round=round_).count() == 2
    assert AuditEvent.objects.get(action="round.published").actor == cast["staff"]


def test_only_each_organisations_final_submission_goes_public(live, cast):
    round_, acme, globex = live
    later = checked_submission(round_, cast["a"], "Acme", "gamma")
    withdrawn = checked_submission(round_, cast["b"], "Globex", "delta")
    Submission.objects.filter(pk=withdrawn.pk).update(status=Submission.Status.WITHDRAWN)
    assert {s.pk for s in final_submissions(round_)} == {later.pk, globex.pk}
    publish_round(round_)  # now, by staff
    public_keys = set(
        public.results().filter(system__round=round_).values_list("system__key", flat=True)
    )
    assert public_keys == {"gamma", "beta"}


def test_a_final_submission_still_being_checked_publishes_nothing_of_its_organisation(live, cast):
    round_, acme, globex = live
    checking = checked_submission(round_, cast["a"], "Acme", "gamma")
    Submission.objects.filter(pk=checking.pk).update(status=Submission.Status.CHECKING)
    assert {s.pk for s in final_submissions(round_)} == {globex.pk}


def test_a_held_result_stays_unpublished(live):
    round_, acme, globex = live
    from submissions.models import Finding, Validation

    validation = Validation.objects.create(  # a second pass, which found an error
        submission=acme, number=2, status=Validation.Status.DONE, verdict="invalid"
    )
    Finding.objects.create(
        validation=validation,
        result=Result.objects.get(system__submission=acme),
        severity="error",
        rule="run.no-run-stop",
        message="no run_stop",
    )
    assert publish_round(round_, now=round_.publish_at) == 1
    assert not Result.objects.get(system__submission=acme).published


def test_staff_publish_from_the_rounds_page_others_cannot(client, live, cast):
    round_, _, _ = live
    client.force_login(cast["member_a"])
    response = client.post("/submissions/rounds/training-v5.1/publish/")
    assert response.status_code == 302 and "/admin/login/" in response["Location"]
    round_.refresh_from_db()
    assert round_.published_at is None
    client.force_login(cast["staff"])
    assert "Publish now" in client.get("/submissions/rounds/").content.decode()
    client.post("/submissions/rounds/training-v5.1/publish/")
    round_.refresh_from_db()
    assert round_.published_at is not None
