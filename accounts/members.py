"""An organisation's members, managed by its admins (and staff): add a user, change a role, remove one.
Audited. Pure rules for who may do what; the page is accounts/views.py."""

from django.db import transaction

from audit.log import record

from .models import Membership


class NotAllowed(Exception):
    """A change the rules refuse; str(e) says why."""


def role_of(user, organisation) -> str | None:
    if not user.is_authenticated:
        return None
    return (
        Membership.objects.filter(user=user, organisation=organisation)
        .values_list("role", flat=True)
        .first()
    )


def may_see(user, organisation) -> bool:
    return user.is_authenticated and (user.is_staff or role_of(user, organisation) is not None)


def may_manage(user, organisation) -> bool:
    return user.is_authenticated and (
        user.is_staff or role_of(user, organisation) == Membership.Role.ADMIN
    )


def _admins_left(organisation, without) -> int:
    return (
        Membership.objects.filter(organisation=organisation, role=Membership.Role.ADMIN)
        .exclude(pk=without.pk)
        .count()
    )


@transaction.atomic
def add(actor, organisation, user, role: str) -> Membership:
    if not may_manage(actor, organisation):
        raise NotAllowed("Only the organisation's admins add members.")
    membership, created = Membership.objects.get_or_create(
        user=user, organisation=organisation, defaults={"role": role}
    )
    if not created:
        raise NotAllowed(f"{user.get_username()} is a member already.")
    record(
        "membership.added",
        actor=actor,
        obj=organisation,
        user=user.get_username(),
        role=role,
    )
    return membership


@transaction.atomic
def change_role(actor, membership: Membership, role: str) -> None:
    organisation = membership.organisation
    if not may_manage(actor, organisation):
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
    organisation = membership.organisation
    if not may_manage(actor, organisation):
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
