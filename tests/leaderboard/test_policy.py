"""leaderboard/access/policy.py's rules as plain functions: a Viewer and the records' attributes, no database.
Through HTTP, for every role and moment of a round, the same rules are tested by test_permissions.py."""

from types import SimpleNamespace

import pytest

from accounts.models import Membership
from leaderboard.access import policy
from submissions.review.models import ObjectionReply

ACME, GLOBEX, INITECH = 1, 2, 3
ROUND = SimpleNamespace(pk=10)
OTHER_ROUND = SimpleNamespace(pk=11)

# The roles by the names of the cast (tests/conftest.py `cast`), as Viewers: member_c is of Initech.
WHO = {
    "anonymous": policy.ANONYMOUS,
    "staff": policy.Viewer(1, staff=True),
    "reviewer": policy.Viewer(2, reviewed_rounds=frozenset({ROUND.pk})),
    "reviewer_of_acme": policy.Viewer(
        3, organisations=frozenset({ACME}), reviewed_rounds=frozenset({ROUND.pk})
    ),
    "member_a": policy.Viewer(4, organisations=frozenset({ACME})),
    "admin_a": policy.Viewer(5, organisations=frozenset({ACME}), administers=frozenset({ACME})),
    "member_b": policy.Viewer(6, organisations=frozenset({GLOBEX})),
    "member_c": policy.Viewer(7, organisations=frozenset({INITECH})),  # party to nothing here
    "other_reviewer": policy.Viewer(8, reviewed_rounds=frozenset({OTHER_ROUND.pk})),
}

# Globex objects to Acme's result in ROUND.
OBJECTION = SimpleNamespace(round=ROUND, from_organisation_id=GLOBEX, against_organisation_id=ACME)
ACME_SUBMISSION = SimpleNamespace(
    organisation_id=ACME, round_id=ROUND.pk, uploaded_by_id=99, round=ROUND
)


def _who_may(rule) -> set[str]:
    return {name for name, who in WHO.items() if rule(who)}


def test_an_objection_is_read_by_its_parties_the_round_s_reviewers_and_staff():
    assert _who_may(lambda who: policy.may_see_objection(who, OBJECTION)) == {
        "staff",
        "reviewer",
        "reviewer_of_acme",
        "member_a",
        "admin_a",
        "member_b",
    }
    assert _who_may(lambda who: policy.may_reply(who, OBJECTION)) == _who_may(
        lambda who: policy.may_see_objection(who, OBJECTION)
    )


def test_a_reviewer_of_neither_party_decides():
    assert _who_may(lambda who: policy.may_decide(who, OBJECTION)) == {"staff", "reviewer"}
    assert "own organisation" in policy.decide_refusal(WHO["reviewer_of_acme"], OBJECTION)
    assert "Only a reviewer" in policy.decide_refusal(WHO["other_reviewer"], OBJECTION)


@pytest.mark.parametrize(
    "name, side",
    [("member_a", "objected"), ("member_b", "objector"), ("reviewer", "reviewer")],
)
def test_a_reply_speaks_for_the_writer_s_side(name, side):
    assert policy.reply_side(WHO[name], OBJECTION) == side
    assert side in ObjectionReply.Side.values


def test_a_member_of_the_organisation_or_staff_withdraws():
    assert _who_may(lambda who: policy.may_withdraw(who, ACME_SUBMISSION)) == {
        "staff",
        "reviewer_of_acme",
        "member_a",
        "admin_a",
    }
    command_line_import = SimpleNamespace(organisation_id=None, round_id=ROUND.pk, uploaded_by_id=1)
    assert _who_may(lambda who: policy.may_withdraw(who, command_line_import)) == {"staff"}


def test_a_member_uploads_for_their_own_organisation_only():
    acme = SimpleNamespace(pk=ACME, name="Acme")
    allowed = _who_may(lambda who: policy.upload_refusal(who, acme) is None)
    assert allowed == {"reviewer_of_acme", "member_a", "admin_a"}
    assert "not a member of Acme" in policy.upload_refusal(WHO["staff"], acme)


def test_staff_alone_import_a_round():
    assert _who_may(policy.may_import_round) == {"staff"}


def test_admins_and_staff_manage_members_and_members_see_them():
    acme = SimpleNamespace(pk=ACME)
    assert _who_may(lambda who: policy.may_manage_members(who, acme)) == {"staff", "admin_a"}
    assert _who_may(lambda who: policy.may_see_members(who, acme)) == {
        "staff",
        "reviewer_of_acme",
        "member_a",
        "admin_a",
    }
    assert policy.ADMIN == Membership.Role.ADMIN


def test_staff_and_reviewers_never_join_an_organisation():
    assert _who_may(policy.may_join) == {"member_a", "admin_a", "member_b", "member_c"}


def test_staff_alone_publish_request_checks_and_see_the_agents():
    for rule in (
        policy.may_publish,
        policy.may_request_check,
        policy.may_revalidate,
        policy.may_see_agents,
        policy.may_upload_history,
    ):
        assert _who_may(rule) == {"staff"}


def test_a_member_uploads_for_the_organisations_they_belong_to():
    assert policy.upload_organisations(WHO["admin_a"]) == {ACME}
    assert policy.upload_organisations(WHO["staff"]) == set()
    assert policy.upload_organisations(WHO["anonymous"]) == set()


def test_an_organisation_objects_for_itself_and_never_to_its_own_submission():
    both = {ACME, GLOBEX}
    assert policy.objecting_for({GLOBEX}, ACME_SUBMISSION) == ({GLOBEX}, None)
    # Of two organisations that take part, the one objected to is not offered.
    assert policy.objecting_for(both, ACME_SUBMISSION) == ({GLOBEX}, None)
    mine, refusal = policy.objecting_for({ACME}, ACME_SUBMISSION)
    assert not mine and "its own submission" in refusal
    mine, refusal = policy.objecting_for({GLOBEX}, ACME_SUBMISSION, organisation_id=INITECH)
    assert not mine and "an organisation you belong to" in refusal
    assert policy.objecting_for(both, ACME_SUBMISSION, organisation_id=ACME)[0] == set()


def test_a_reviewer_s_rounds_are_those_they_review_staff_s_every_live_one():
    from django.db.models import Q

    assert policy.rounds_reviewed(WHO["reviewer"]) == Q(pk__in=frozenset({ROUND.pk}))
    assert policy.rounds_reviewed(WHO["member_a"]) == Q(pk__in=frozenset())
    assert policy.rounds_reviewed(WHO["staff"]) == ~Q(publish_at=None)


def test_a_page_or_an_api_view_asks_the_rule_of_its_user(rf):
    """page_for and permission wrap a rule of a Viewer for a view and for DRF; composed with DRF's
    operators they answer as the rules do."""
    from django.contrib.auth.models import AnonymousUser
    from django.http import HttpResponse

    page = policy.page_for(policy.may_publish)(lambda request: HttpResponse("calendar"))
    request = rf.get("/rounds/")
    request.user = AnonymousUser()
    refused = page(request)
    assert refused.status_code == 302 and "/admin/login/" in refused["Location"]
    readers = (policy.ReadOnly | policy.permission(policy.may_request_check))()
    asks = rf.post("/api/v1/reference-checks/")
    asks.user = AnonymousUser()
    reads = rf.get("/api/v1/reference-checks/")
    reads.user = AnonymousUser()
    assert readers.has_permission(reads, None) and not readers.has_permission(asks, None)


def test_a_whole_submission_is_seen_by_its_organisation_its_round_s_reviewers_and_its_uploader():
    assert _who_may(lambda who: who.may_see(ACME_SUBMISSION)) == {
        "staff",
        "reviewer",
        "reviewer_of_acme",
        "member_a",
        "admin_a",
    }
    peer = policy.Viewer(12, organisations=frozenset({GLOBEX}), peer_rounds=frozenset({ROUND.pk}))
    uploader = policy.Viewer(99)
    assert peer.may_see(ACME_SUBMISSION) and uploader.may_see(ACME_SUBMISSION)


def test_an_objection_to_one_s_own_organisation_is_never_offered():
    """may_object_to answers before asking the round who submitted: a member of the organisation
    objected to is refused without a query."""
    assert not policy.may_object_to(WHO["member_a"], ACME_SUBMISSION)
