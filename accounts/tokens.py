"""Making and revoking API tokens, audited: the one path for the pages, the API and the admin."""

from django.utils import timezone

from audit.log import record

from .models import ApiToken


def issue(user, name: str) -> tuple[ApiToken, str]:
    """A new token of `user` and its key, which is shown once and never stored."""
    token, key = ApiToken.create(user, name)
    record("token.created", actor=user, obj=token, name=token.name, prefix=token.prefix)
    return token, key


def revoke(token: ApiToken, actor) -> bool:
    """Revoke a token; returns whether it was live (revoking twice records once)."""
    changed = ApiToken.objects.filter(pk=token.pk, revoked_at__isnull=True).update(
        revoked_at=timezone.now()
    )
    if changed:
        record(
            "token.revoked",
            actor=actor,
            obj=token,
            name=token.name,
            prefix=token.prefix,
            owner=token.user.get_username(),
        )
    return bool(changed)
