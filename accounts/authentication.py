"""`Authorization: Token <key>` for the API: the key's sha256 names a live token of an active user."""

from datetime import timedelta

from django.utils import timezone
from rest_framework import authentication, exceptions

from .models import ApiToken, hash_key

# last_used_at is written at most this often per token: a busy CI should not write on every request.
LAST_USED_EVERY = timedelta(minutes=1)


class TokenAuthentication(authentication.BaseAuthentication):
    keyword = "Token"

    def authenticate(self, request):
        header = authentication.get_authorization_header(request).split()
        if not header or header[0].lower() != self.keyword.lower().encode():
            return None
        if len(header) != 2:
            raise exceptions.AuthenticationFailed(
                "Invalid token header: give 'Token <key>', the key without spaces."
            )
        try:
            key = header[1].decode("ascii")
        except UnicodeDecodeError:
            raise exceptions.AuthenticationFailed("Invalid token.") from None
        return self.authenticate_credentials(key)

    def authenticate_credentials(self, key: str):
        token = (
            ApiToken.objects.live().select_related("user").filter(key_sha256=hash_key(key)).first()
        )
        if token is None or not token.user.is_active:
            raise exceptions.AuthenticationFailed("Invalid or revoked token.")
        now = timezone.now()
        if token.last_used_at is None or now - token.last_used_at > LAST_USED_EVERY:
            ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        return token.user, token

    def authenticate_header(self, request):
        return self.keyword  # a 401 rather than a 403 for a missing or bad token
