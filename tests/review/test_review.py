"""Peer review and withdrawal (submissions/review/objections.py): who may object, answer, decide and withdraw,
what each decision does, and the pages and API around them."""

import uuid
from datetime import timedelta

import pytest
from django.utils import timezone

from audit.models import AuditEvent
from leaderboard.access import policy
from leaderboard.models import Result, Round, Submitter, System
from submissions.models import Submission, Validation
from submissions.review import objections as review
from submissions.review import withdrawals
from submissions.review.models import Objection

pytestmark = pytest.mark.django_db

HOUR = timedelta(hours=1)


def _round(phase="review") -> Round:
    from leaderboard.catalogue.rounds import load_round

    round_ = load_round(
        {
            "key": "training-live",
            "name": "Training live",
            "ruleset": "5.1.0",
            "log_format": "mllog",
            "benchmarks": [{"key": "bert", "name": "BERT", "required_runs": 3}],
        }
    )
    set_phase(round_, phase)
    return round_


def set_phase(round_: Round, phase: str) -> None:
    now = timezone.now()
    deadline = {"open": now + HOUR, "review": now - HOUR, "closed": now - 3 * HOUR}[phase]
    round_.opens_at = now - 48 * HOUR
    round_.deadline_at = deadline
    round_.review_ends_at = now - 2 * HOUR if phase == "closed" else now + 24 * HOUR
    round_.publish_at = now + 48 * HOUR
    round_.save()


def _submission(round_, org, user, systems=("sys",)) -> Submission:
    submitter, _ = Submitter.objects.get_or_create(name=org.name)
    submission = Submission.objects.create(
        round=round_,
        submitter=submitter,
        organisation=org,
        uploaded_by=user,
        bundle=f"bundles/{org.name}-{uuid.uuid4().hex}.tgz",
        original_name=f"{org.name}.tgz",
        sha256=uuid.uuid4().hex * 2,
        size=1,
        status=Submission.Status.VALID,
    )
    for key in systems:
        system = System.objects.create(
            submission=submission, round=round_, submitter=submitter, key=key, name=key
        )
        Result.objects.create(
            system=system, benchmark=round_.benchmarks.get(key="bert"), path=key, score_s=60.0
        )
    Validation.objects.create(  # scored: its organisation takes part in the review
        submission=submission, number=1, status="done", verdict="valid", scored=len(systems)
    )
    return submission


@pytest.fixture
def live(cast):
    round_ = _round()
    round_.reviewers.add(cast["reviewer"])
    a = _submission(round_, cast["a"], cast["member_a"], systems=("a1", "a2"))
    b = _submission(round_, cast["b"], cast["member_b"])
    return {**cast, "round": round_, "sub_a": a, "sub_b": b}


def _object(live, user="member_b", against="a", **fields):
    values = {"system_key": "a1", "benchmark_key": "bert", "rule": "8.2", "comment": "too fast"}
    values.update(fields)
    return review.file_objection(live[user], live[f"sub_{against}"], **values)


def test_a_member_of_another_submitting_organisation_objects_during_review(live):
    objection = _object(live, file="results/a1/bert/result_0.txt", lines="10-12")
    assert objection.from_organisation == live["b"] and objection.against_organisation == live["a"]
    assert objection.result.benchmark.key == "bert" and objection.status == Objection.Status.OPEN
    event = AuditEvent.objects.get(action="objection.filed")
    assert event.object_uid == str(objection.uid) and event.actor_name == "member_b"


def test_an_objection_against_a_whole_system_names_no_result(live):
    objection = _object(live, benchmark_key="")
    assert objection.result is None and objection.target_label == "a1"


@pytest.mark.parametrize("phase", ["open", "closed"])
def test_no_objection_outside_the_review(live, phase):
    set_phase(live["round"], phase)
    with pytest.raises(review.ReviewError):
        _object(live)
    assert not Objection.objects.exists()


def test_an_organisation_does_not_object_to_itself(live):
    with pytest.raises(review.NotAllowed):
        _object(live, user="member_a")


@pytest.mark.parametrize("user", ["outsider", "reviewer"])
def test_who_submitted_nothing_finds_nothing_to_object_to(live, user):
    with pytest.raises(review.NotFound):
        _object(live, user=user)


def test_an_objection_needs_a_rule_and_a_comment_and_a_real_target(live):
    for fields in ({"rule": " "}, {"comment": ""}, {"system_key": "nope"}, {"benchmark_key": "x"}):
        with pytest.raises(review.ReviewError):
            _object(live, **fields)


def test_the_thread_is_read_by_the_parties_and_reviewers_only(live):
    objection = _object(live)
    for name in ("member_a", "admin_a", "member_b", "reviewer", "staff"):
        assert policy.may_see_objection(policy.viewer(live[name]), objection), name
        assert list(review.visible_objections(live[name])) == [objection]
    assert not policy.may_see_objection(policy.viewer(live["outsider"]), objection)
    assert not review.visible_objections(live["outsider"]).exists()
    with pytest.raises(review.NotFound):
        review.reply(live["outsider"], objection, "me too")


def test_the_organisation_objected_to_answers_and_the_thread_records_sides(live):
    objection = _object(live)
    review.reply(live["member_a"], objection, "It is not.")
    review.reply(live["member_b"], objection, "It is.")
    review.reply(live["reviewer"], objection, "Show the log.")
    objection.refresh_from_db()
    assert objection.status == Objection.Status.ANSWERED
    assert list(objection.replies.values_list("side", flat=True)) == [
        "objected",
        "objector",
        "reviewer",
    ]


def test_a_reviewer_of_either_party_does_not_decide(live):
    objection = _object(live)
    live["round"].reviewers.add(live["member_a"])
    with pytest.raises(review.NotAllowed):
        review.decide(live["member_a"], objection, "accepted")
    with pytest.raises(review.NotAllowed):
        review.decide(live["member_b"], objection, "accepted")
    assert review.can_decide(live["reviewer"], objection)
    assert not review.can_decide(live["member_a"], objection)


def test_moved_to_open_changes_the_systems_division(live):
    objection = _object(live)
    review.decide(live["reviewer"], objection, "moved_to_open", "not closed-division code")
    assert System.objects.get(key="a1").division == "open"
    assert System.objects.get(key="a2").division == "closed"
    objection.refresh_from_db()
    assert objection.status == Objection.Status.DECIDED and objection.decided_by == live["reviewer"]
    assert AuditEvent.objects.filter(action="objection.decided").count() == 1
    with pytest.raises(review.ReviewError):  # decided once
        review.decide(live["reviewer"], objection, "waived")


def test_withdrawn_withdraws_the_result_and_publication_skips_it(live):
    from submissions.checking.pipeline import publish

    review.decide(live["reviewer"], _object(live), "withdrawn")
    assert Result.objects.get(system__key="a1").withdrawn
    publish(live["sub_a"].pk)
    published = dict(Result.objects.values_list("system__key", "published"))
    assert published == {"a1": False, "a2": True, "sys": False}


def test_fix_required_lets_the_organisation_upload_once_and_the_upload_answers(live):
    objection = _object(live)
    assert not review.fix_requested(live["a"], live["round"])
    review.decide(live["reviewer"], objection, "fix_required", "rerun with the right seeds")
    assert review.fix_requested(live["a"], live["round"])
    assert not review.fix_requested(live["b"], live["round"])
    fix = Submission.objects.create(
        round=live["round"],
        organisation=live["a"],
        uploaded_by=live["member_a"],
        bundle="bundles/fix.tgz",
        original_name="fix.tgz",
        sha256="f" * 64,
        size=1,
    )
    objection.refresh_from_db()
    assert objection.status == Objection.Status.FIXED and objection.fix == fix
    assert objection.replies.last().side == "portal"
    assert not review.fix_requested(live["a"], live["round"])
    review.decide(live["reviewer"], objection, "accepted", "fixed")  # decided again, finally
    assert AuditEvent.objects.filter(action="objection.fixed").count() == 1


def test_a_member_withdraws_a_result_or_the_submission_before_publication(live):
    withdrawals.withdraw_result(live["member_a"], live["sub_a"], "a2", "bert", "a typo")
    assert Result.objects.get(system__key="a2").withdrawn
    with pytest.raises(review.NotFound):  # another organisation's
        withdrawals.withdraw_submission(live["member_b"], live["sub_a"])
    withdrawals.withdraw_submission(live["admin_a"], live["sub_a"], "start again")
    live["sub_a"].refresh_from_db()
    assert live["sub_a"].status == Submission.Status.WITHDRAWN
    assert [e.action for e in AuditEvent.objects.order_by("at", "pk")] == [
        "result.withdrawn",
        "submission.withdrawn",
    ]


def test_the_submission_page_counts_a_withdrawn_result_apart(client, live):
    withdrawals.withdraw_result(live["member_a"], live["sub_a"], "a2", "bert")
    client.force_login(live["member_a"])
    page = client.get(live["sub_a"].get_absolute_url()).content.decode()
    assert "1 of 2 results can be published; 1 withdrawn." in page
    assert "<strong>Withdrawn.</strong>" in page


def test_nothing_is_withdrawn_after_publication(live):
    Round.objects.filter(pk=live["round"].pk).update(publish_at=timezone.now() - HOUR)
    live["sub_a"].round.refresh_from_db()
    with pytest.raises(review.ReviewError, match="published"):
        withdrawals.withdraw_result(live["member_a"], live["sub_a"], "a1", "bert")
    with pytest.raises(review.ReviewError, match="published"):
        withdrawals.withdraw_submission(live["member_a"], live["sub_a"])


# -- pages and API -------------------------------------------------------------------------------


def test_the_review_page_is_for_reviewers_and_staff(client, live):
    objection = _object(live)
    url = f"/review/{live['round'].key}/"
    for name, status in (("member_a", 404), ("member_b", 404), ("reviewer", 200), ("staff", 200)):
        client.force_login(live[name])
        page = client.get(url)
        assert page.status_code == status, name
    assert str(objection.uid) in page.content.decode()
    assert "objection.filed" in page.content.decode()  # the round's audit log


def test_the_review_index_lists_reviewed_rounds_and_ones_own_objections(client, live):
    objection = _object(live)
    client.force_login(live["reviewer"])
    page = client.get("/review/").content.decode()
    assert f"/review/{live['round'].key}/" in page and str(objection.uid) not in page
    client.force_login(live["member_a"])
    page = client.get("/review/").content.decode()
    assert str(objection.uid) in page and f"/review/{live['round'].key}/" not in page
    client.force_login(live["outsider"])
    assert str(objection.uid) not in client.get("/review/").content.decode()


def test_the_thread_page_replies_and_decides(client, live):
    objection = _object(live)
    client.force_login(live["outsider"])
    assert client.get(f"/review/objections/{objection.uid}/").status_code == 404
    client.force_login(live["member_a"])
    page = client.get(f"/review/objections/{objection.uid}/").content.decode()
    assert "too fast" in page and 'name="decision"' not in page
    client.post(f"/review/objections/{objection.uid}/reply/", {"text": "No: see the log"})
    client.force_login(live["reviewer"])
    page = client.get(f"/review/objections/{objection.uid}/").content.decode()
    assert "No: see the log" in page and 'name="decision"' in page
    client.post(f"/review/objections/{objection.uid}/decide/", {"decision": "waived"})
    objection.refresh_from_db()
    assert objection.decision == "waived"


def test_the_submission_page_lists_its_objections_for_its_organisation(client, live):
    _object(live, comment="seeds repeat")
    client.force_login(live["member_a"])
    page = client.get(live["sub_a"].get_absolute_url()).content.decode()
    assert 'id="submission-objections"' in page and "8.2" in page
    assert "Withdraw" in page


def test_the_api_files_replies_decides_and_lists_only_what_one_may_see(client, live):
    client.force_login(live["member_b"])
    made = client.post(
        "/api/v1/objections/",
        {
            "submission": str(live["sub_a"].uid),
            "system": "a1",
            "benchmark": "bert",
            "rule": "8.2",
            "comment": "c",
        },
        content_type="application/json",
    )
    assert made.status_code == 201, made.content
    uid = made.json()["uid"]
    assert client.get("/api/v1/objections/").json()["count"] == 1
    refused = client.post(f"/api/v1/objections/{uid}/decide/", {"decision": "waived"})
    assert refused.status_code == 403
    client.force_login(live["outsider"])
    assert client.get("/api/v1/objections/").json()["count"] == 0
    assert client.get(f"/api/v1/objections/{uid}/").status_code == 404
    client.force_login(live["reviewer"])
    decided = client.post(
        f"/api/v1/objections/{uid}/decide/",
        {"decision": "fix_required", "note": "n"},
        content_type="application/json",
    )
    assert decided.json()["status"] == "fix_required"


def test_the_api_withdraws_and_answers_404_for_another_organisations_submission(client, live):
    client.force_login(live["member_b"])
    url = f"/api/v1/submissions/{live['sub_a'].uid}/withdraw/"
    assert client.post(url, {}).status_code == 404
    client.force_login(live["member_a"])
    one = client.post(url, {"system": "a1", "benchmark": "bert"}, content_type="application/json")
    assert one.json()["withdrawn"] == ["a1/bert"]
    whole = client.post(url, {}, content_type="application/json")
    assert whole.json()["status"] == "withdrawn"


def test_a_decision_holds_for_a_fix_uploaded_after_it(live):
    from submissions.checking.pipeline import publish

    objection = _object(live)
    review.decide(live["reviewer"], objection, "fix_required")
    fix = _submission(live["round"], live["a"], live["member_a"], systems=("a1", "a2"))
    objection.refresh_from_db()
    assert objection.fix == fix
    review.decide(live["reviewer"], objection, "withdrawn", "the fix did not help")
    assert set(
        Result.objects.filter(withdrawn=True).values_list("system__submission", flat=True)
    ) == {
        live["sub_a"].pk,
        fix.pk,
    }
    moved = _object(live, benchmark_key="", system_key="a2")
    review.decide(live["reviewer"], moved, "moved_to_open")
    later = _submission(live["round"], live["a"], live["member_a"], systems=("a1", "a2"))
    publish(later.pk)  # uploaded after both decisions: publication carries them
    published = dict(
        Result.objects.filter(system__submission=later).values_list("system__key", "published")
    )
    assert published == {"a1": False, "a2": True}
    assert later.systems.get(key="a2").division == "open"


def test_the_objection_form_is_for_other_submitters_during_review(client, live):
    url = f"/review/object/{live['sub_a'].uid}/"
    client.force_login(live["member_a"])
    assert client.get(url).status_code == 404  # one's own submission
    client.force_login(live["member_b"])
    form = client.get(url + "?system=a2").content.decode()
    assert "<option selected>a2</option>" in form and 'name="rule"' in form
    refused = client.post(url, {"system": "a1", "rule": "", "comment": "c"})
    assert refused.status_code == 400 and "Say rule" in refused.content.decode()
    made = client.post(url, {"system": "a1", "benchmark": "bert", "rule": "8.2", "comment": "c"})
    objection = Objection.objects.get()
    assert made.status_code == 302 and made["Location"] == objection.get_absolute_url()
    set_phase(live["round"], "open")
    assert client.get(url).status_code == 404


def test_a_nul_character_is_refused_with_the_reason_never_a_500(client, live):
    client.force_login(live["member_b"])
    url = f"/review/object/{live['sub_a'].uid}/"
    fields = {"system": "a1", "benchmark": "bert", "rule": "8.2", "comment": "c"}
    for name in fields:
        refused = client.post(url, {**fields, name: fields[name] + "\x00"})
        assert refused.status_code == 400 and "NUL" in refused.content.decode(), name
    api = client.post(
        "/api/v1/objections/",
        {"submission": str(live["sub_a"].uid), **fields, "comment": "\x00"},
        content_type="application/json",
    )
    assert api.status_code == 400
    objection = _object(live)
    assert (
        client.post(f"/review/objections/{objection.uid}/reply/", {"text": "\x00"}).status_code
        == 302
    )
    assert not objection.replies.exists()
    client.force_login(live["member_a"])
    withdraw = f"/review/withdraw/{live['sub_a'].uid}/"
    assert client.post(withdraw, {"result": "a\x001/bert"}).status_code == 302
    assert not Result.objects.filter(withdrawn=True).exists()
    client.force_login(live["reviewer"])
    assert client.get("/review/a%00b/").status_code == 400  # portal/middleware.py


def test_an_objections_refusal_is_in_the_users_language(client, live):
    """The API answers in Accept-Language's language, the page in the chosen one; the same refusal in
    English for an English reader."""
    client.force_login(live["member_b"])
    fields = {"submission": str(live["sub_a"].uid), "system": "nope", "rule": "8.2", "comment": "c"}
    for language, said in (("zh-hans", "此提交中没有系统 'nope'。"), ("en", "no system 'nope'")):
        refused = client.post(
            "/api/v1/objections/",
            fields,
            content_type="application/json",
            HTTP_ACCEPT_LANGUAGE=language,
        )
        assert refused.status_code == 400 and said in refused.content.decode(), language
    url = f"/review/object/{live['sub_a'].uid}/?lang=zh-hans"
    empty = client.post(url, {"system": "a1", "benchmark": "bert", "rule": " ", "comment": ""})
    assert "请填写规则和说明：异议需要这些内容。" in empty.content.decode()
