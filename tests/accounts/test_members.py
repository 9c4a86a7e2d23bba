"""An organisation's page: its members see it, its admins manage it, everyone else gets 404."""

import pytest

from accounts.models import Membership
from audit.models import AuditEvent

pytestmark = pytest.mark.django_db


def page(cast, org="a"):
    return f"/accounts/organisations/{cast[org].slug}/"


def test_members_see_their_organisation_others_get_404(client, cast):
    for who, status in (
        ("member_a", 200),
        ("admin_a", 200),
        ("staff", 200),
        ("member_b", 404),
        ("reviewer", 404),
        ("outsider", 404),
    ):
        client.force_login(cast[who])
        response = client.get(page(cast))
        assert response.status_code == status, who
        assert ("admin_a" in response.content.decode()) == (status == 200)


def test_an_admin_invites_changes_and_removes_members_audited(client, cast):
    from accounts.models import Invitation

    client.force_login(cast["admin_a"])
    client.post(page(cast), {"username": "outsider", "role": "member"})
    assert not Membership.objects.filter(user=cast["outsider"]).exists()  # not without consent
    invitation = Invitation.objects.get(user=cast["outsider"], organisation=cast["a"])
    client.force_login(cast["outsider"])
    assert "Acme invites you as member" in client.get("/accounts/tokens/").content.decode()
    client.post(f"/accounts/invitations/{invitation.uid}/", {"action": "accept"})
    added = Membership.objects.get(user=cast["outsider"], organisation=cast["a"])
    client.force_login(cast["admin_a"])
    client.post(f"{page(cast)}members/{added.pk}/", {"role": "admin"})
    added.refresh_from_db()
    assert added.role == "admin"
    client.post(f"{page(cast)}members/{added.pk}/", {"action": "remove"})
    assert not Membership.objects.filter(pk=added.pk).exists()
    assert list(
        AuditEvent.objects.filter(organisation="Acme")
        .order_by("at")
        .values_list("action", flat=True)
    ) == [
        "membership.invited",
        "membership.added",
        "membership.role_changed",
        "membership.removed",
    ]


def test_a_member_who_is_not_admin_changes_nothing(client, cast):
    client.force_login(cast["member_a"])
    assert client.post(page(cast), {"username": "outsider", "role": "admin"}).status_code == 404
    admin = Membership.objects.get(user=cast["admin_a"])
    assert client.post(f"{page(cast)}members/{admin.pk}/", {"action": "remove"}).status_code == 404
    assert Membership.objects.filter(organisation=cast["a"]).count() == 2


def test_the_last_admin_stays(client, cast):
    client.force_login(cast["admin_a"])
    own = Membership.objects.get(user=cast["admin_a"])
    response = client.post(f"{page(cast)}members/{own.pk}/", {"action": "remove"}, follow=True)
    assert "keeps at least one admin" in response.content.decode()
    assert Membership.objects.filter(pk=own.pk).exists()


def test_a_membership_of_another_organisation_is_not_found_here(client, cast):
    client.force_login(cast["admin_a"])
    theirs = Membership.objects.get(user=cast["member_b"])
    assert client.post(f"{page(cast)}members/{theirs.pk}/", {"action": "remove"}).status_code == 404


def test_the_local_demo_admin_can_upload_for_an_organisation(settings):
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    settings.DEBUG = True
    call_command("ensure_admin")
    admin = get_user_model().objects.get(username="admin")
    assert admin.memberships.get().role == Membership.Role.ADMIN


def test_an_organisation_name_that_reads_as_anothers_is_refused(cast):
    from django.core.exceptions import ValidationError

    from accounts.models import Organisation

    for name in ("GLOBEX", "globex.", "Glоbex", "G L O B E X"):  # the third's "о" is Cyrillic
        with pytest.raises(ValidationError, match="reads as Globex"):
            Organisation(name=name, slug="new").full_clean()
    Organisation(name="Globe", slug="globe").full_clean()
    cast["b"].full_clean()  # its own name is no clash
