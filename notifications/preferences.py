"""How each user hears of each kind of event: their Preference, else the event's default (events.py);
the language they are told in (their Language, else settings.LANGUAGE_CODE); and the signed one-click
unsubscribe token that a mail carries."""

from django.conf import settings
from django.core import signing

from .events import EVENTS
from .models import Channel, Language, Preference

SALT = "notifications.unsubscribe"
MAIL = {Channel.BOTH, Channel.EMAIL}
SITE = {Channel.BOTH, Channel.SITE}


def channels(user_ids, kind: str) -> dict[int, str]:
    """Each user's channel for `kind`."""
    chosen = dict(
        Preference.objects.filter(user_id__in=user_ids, kind=kind).values_list("user_id", "channel")
    )
    return {pk: chosen.get(pk, EVENTS[kind].default) for pk in user_ids}


def table(user) -> list[tuple[str, str, str]]:
    """(kind, label, channel) of every event for `user`, in the events' order."""
    chosen = dict(user.notification_preferences.values_list("kind", "channel"))
    return [(e.kind, e.label, chosen.get(e.kind, e.default)) for e in EVENTS.values()]


def choose(user, kind: str, channel: str) -> None:
    if kind not in EVENTS or channel not in Channel.values:
        raise ValueError(f"{kind}: {channel}")
    Preference.objects.update_or_create(user=user, kind=kind, defaults={"channel": channel})


def languages(user_ids) -> dict[int, str]:
    """Each user's language for notifications."""
    chosen = dict(Language.objects.filter(user_id__in=user_ids).values_list("user_id", "language"))
    return {pk: chosen.get(pk, settings.LANGUAGE_CODE) for pk in user_ids}


def choose_language(user, language: str, unless_chosen: bool = False) -> None:
    """The user's notifications in `language` from now on (one of settings.LANGUAGES); written only when
    it changes. unless_chosen: only for a user who has none yet."""
    if language not in dict(settings.LANGUAGES):
        raise ValueError(language)
    current = Language.objects.filter(user=user).values_list("language", flat=True).first()
    if current == language or (unless_chosen and current is not None):
        return
    Language.objects.update_or_create(user=user, defaults={"language": language})


def unsubscribe_token(user_id: int, kinds) -> str:
    """A signed token that stops the user's mail of these kinds (one, or those a digest lists)."""
    kinds = sorted({kinds} if isinstance(kinds, str) else set(kinds))
    return signing.dumps({"u": user_id, "k": kinds}, salt=SALT, compress=True)


def read_unsubscribe_token(token: str) -> tuple[int, list[str]] | None:
    """(user id, kinds) of a token this site signed, or None. A token of one kind as a string is one that
    mails signed before digests."""
    try:
        data = signing.loads(token, salt=SALT)
    except signing.BadSignature:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("u"), int):
        return None
    kinds = [data.get("k")] if isinstance(data.get("k"), str) else data.get("k")
    if not isinstance(kinds, list) or not kinds or not all(k in EVENTS for k in kinds):
        return None
    return data["u"], kinds


def stop_mail(user_id: int, kind: str) -> None:
    """Unsubscribed: no more mail of this kind (still shown in the site unless they chose none)."""
    current = channels([user_id], kind)[user_id]
    channel = Channel.SITE if current in SITE else Channel.NONE
    Preference.objects.update_or_create(user_id=user_id, kind=kind, defaults={"channel": channel})
