"""An organisation's members, managed by its admins (and staff): invite a user, who accepts or declines;
change a role, remove one. Audited. Who may see and manage members is leaderboard/access/policy.py's; the pages are accounts/views.py.

Nobody is made a member without their consent: an admin invites, the invited user accepts. Reviewers and
staff are never invited (a reviewer who belonged to an organisation could no longer decide objections
against it). What an admin is told of an invitation does not say whether the user exists, nor whether
they are a reviewer or staff: an organisation admin learns no usernames from it.

Changes to one organisation's members are serialised by a lock on the organisation's row: two admins
demoting each other at once leave one admin, not none.
"""

from django.db import transaction
from django.utils.translation import gettext_noop

from audit.log import record
from leaderboard.access import policy

from .models import Invitation, Membership, Organisation


class NotAllowed(Exception):
    """A change the rules refuse; str(e) says why."""


def _admins_left(organisation, without) -> int:
    return (
        Membership.objects.filter(organisation=organisation, role=Membership.Role.ADMIN)
        .exclude(pk=without.pk)
        .count()
    )


def may_join(user) -> bool:
    """Whether `user` may be invited to (and accept) a membership: not staff, reviewer of no round."""
    return user.is_active and policy.may_join(policy.viewer(user))


def _locked(organisation) -> Organisation:
    """The organisation's row, locked until the transaction ends: one change of its members at a time."""
    return Organisation.objects.select_for_update().get(pk=organisation.pk)


INVITED = gettext_noop(
    "If {name} has an account and may join (reviewers and staff may not), they are invited: they "
    "accept on their account page (API tokens), and are a member from then on."
)


@transaction.atomic
def invite(actor, organisation, username: str, role: str) -> Invitation | None:
    """Invite the user named `username`; None where there is nobody who may join under that name. The
    answer to show the admin is INVITED either way."""
    from django.contrib.auth import get_user_model

    organisation = _locked(organisation)
    if not policy.may_manage_members(policy.viewer(actor), organisation):
        raise NotAllowed("Only the organisation's admins invite members.")
    user = get_user_model().objects.filter(username=username).first()
    if user is None or not may_join(user):
        return None
    if Membership.objects.filter(user=user, organisation=organisation).exists():
        raise NotAllowed(f"{user.get_username()} is a member already.")
    invitation, created = Invitation.objects.update_or_create(
        user=user, organisation=organisation, defaults={"role": role, "invited_by": actor}
    )
    record("membership.invited", actor=actor, obj=organisation, user=user.get_username(), role=role)
    return invitation


@transaction.atomic
def accept(user, invitation: Invitation) -> Membership:
    """The invited user's consent: the invitation becomes a membership."""
    organisation = _locked(invitation.organisation)
    invitation = Invitation.objects.filter(pk=invitation.pk, user=user).first()
    if invitation is None:
        raise NotAllowed("This invitation is no longer open.")
    if not may_join(user):
        raise NotAllowed("Reviewers and staff do not join organisations.")
    invitation.delete()
    membership, _ = Membership.objects.get_or_create(
        user=user, organisation=organisation, defaults={"role": invitation.role}
    )
    record(
        "membership.added",
        actor=user,
        obj=organisation,
        user=user.get_username(),
        role=membership.role,
    )
    return membership


@transaction.atomic
def decline(user, invitation: Invitation) -> None:
    deleted, _ = Invitation.objects.filter(pk=invitation.pk, user=user).delete()
    if deleted:
        record(
            "membership.declined",
            actor=user,
            obj=invitation.organisation,
            user=user.get_username(),
        )


@transaction.atomic
def change_role(actor, membership: Membership, role: str) -> None:
    organisation = _locked(membership.organisation)
    membership = Membership.objects.filter(pk=membership.pk).select_related("user").first()
    if membership is None:
        raise NotAllowed("That user is no longer a member.")
    if not policy.may_manage_members(policy.viewer(actor), organisation):
        raise NotAllowed("Only the organisation's admins change roles.")
    if membership.role == role:
        return
    if membership.role == Membership.Role.ADMIN and not _admins_left(organisation, membership):
        raise NotAllowed("An organisation keeps at least one admin: make another admin first.")
    before = membership.role
    Membership.objects.filter(pk=membership.pk).update(role=role)
    record(
        "membership.role_changed",
        actor=actor,
        obj=organisation,
        user=membership.user.get_username(),
        before=before,
        after=role,
    )


@transaction.atomic
def remove(actor, membership: Membership) -> None:
    organisation = _locked(membership.organisation)
    membership = Membership.objects.filter(pk=membership.pk).select_related("user").first()
    if membership is None:
        return
    if not policy.may_manage_members(policy.viewer(actor), organisation):
        raise NotAllowed("Only the organisation's admins remove members.")
    if membership.role == Membership.Role.ADMIN and not _admins_left(organisation, membership):
        raise NotAllowed("An organisation keeps at least one admin: make another admin first.")
    membership.delete()
    record(
        "membership.removed",
        actor=actor,
        obj=organisation,
        user=membership.user.get_username(),
        role=membership.role,
    )
