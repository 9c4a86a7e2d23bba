"""Who may do what: organisations, their members, and the API tokens users make.

An Organisation is a submitter as leaderboard/catalogue/organisations.py groups it (`organisation_of`
of a submitter name gives its `name`). A user belongs to organisations through Membership,
as a member or an organisation admin. Reviewers of a round are on the round
(leaderboard.Round.reviewers); staff is Django's `is_staff`.
"""

import hashlib
import secrets
import uuid

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.utils import timezone
from django.utils.text import slugify
from django.utils.translation import gettext_lazy as _

from leaderboard.catalogue.organisations import lookalike_key

# The key's first characters, kept in the clear so that a user can tell tokens apart in the list.
KEY_PREFIX_CHARS = 8


class Organisation(models.Model):
    uid = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    name = models.CharField(
        max_length=200,
        unique=True,
        help_text="The organisation's name as leaderboard/catalogue/organisations.py gives it for its submitter names.",
    )
    slug = models.SlugField(max_length=200, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    members = models.ManyToManyField(
        settings.AUTH_USER_MODEL, through="Membership", related_name="organisations"
    )

    class Meta:
        ordering = ["name"]

    def __str__(self):
        return self.name

    def clean(self):
        """A name that reads as another organisation's (lookalike_key: "BETA ORG", "beta-org" and a
        Cyrillic "Вeta Org" all read as "Beta Org") is refused: members of one would pass for the other."""
        key = lookalike_key(self.name)
        if not key:
            raise ValidationError({"name": "An organisation's name needs letters or digits."})
        others = Organisation.objects.exclude(pk=self.pk).values_list("name", flat=True)
        clash = next((name for name in others if lookalike_key(name) == key), None)
        if clash is not None:
            raise ValidationError(
                {
                    "name": f"“{self.name}” reads as {clash}, another organisation's name: choose another."
                }
            )

    def save(self, *args, **kwargs):
        if not self.slug:
            self.slug = slugify(self.name)[:190] or uuid.uuid4().hex[:12]
        super().save(*args, **kwargs)


class Membership(models.Model):
    class Role(models.TextChoices):
        MEMBER = "member", _("Member")
        ADMIN = "admin", _("Organisation admin")

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    organisation = models.ForeignKey(
        Organisation, on_delete=models.CASCADE, related_name="memberships"
    )
    role = models.CharField(max_length=10, choices=Role.choices, default=Role.MEMBER)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["organisation", "user"]
        constraints = [
            models.UniqueConstraint(fields=["user", "organisation"], name="one_membership_per_org")
        ]

    def __str__(self):
        return f"{self.user} in {self.organisation} ({self.role})"


class Invitation(models.Model):
    """An organisation admin's offer of a membership, which only the invited user makes one (accepts);
    until then the user is no member and sees nothing of the organisation's."""

    uid = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="invitations"
    )
    organisation = models.ForeignKey(
        Organisation, on_delete=models.CASCADE, related_name="invitations"
    )
    role = models.CharField(
        max_length=10, choices=Membership.Role.choices, default=Membership.Role.MEMBER
    )
    invited_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["organisation", "created_at"]
        constraints = [
            models.UniqueConstraint(fields=["user", "organisation"], name="one_invitation_per_org")
        ]

    def __str__(self):
        return f"{self.user} invited to {self.organisation} ({self.role})"


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


class ApiTokenQuerySet(models.QuerySet):
    def live(self):
        return self.filter(revoked_at__isnull=True)


class ApiToken(models.Model):
    """A key for `Authorization: Token <key>`. Only the key's sha256 is stored: the key is shown once,
    when it is made (ApiToken.create), and cannot be read back."""

    uid = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=100, help_text="What the token is for, e.g. 'CI'.")
    key_sha256 = models.CharField(max_length=64, unique=True, editable=False)
    prefix = models.CharField(max_length=KEY_PREFIX_CHARS, editable=False)
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    last_used_at = models.DateTimeField(null=True, blank=True, editable=False)
    revoked_at = models.DateTimeField(null=True, blank=True)

    objects = ApiTokenQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]

    def __str__(self):
        return f"{self.name} ({self.prefix}…) of {self.user}"

    @classmethod
    def create(cls, user, name: str) -> tuple["ApiToken", str]:
        """A new token and its key (shown once, never stored)."""
        key = secrets.token_urlsafe(32)
        token = cls.objects.create(
            user=user, name=name, key_sha256=hash_key(key), prefix=key[:KEY_PREFIX_CHARS]
        )
        return token, key

    @property
    def revoked(self) -> bool:
        return self.revoked_at is not None
