"""The one way to write the audit log: record(action, ...)."""

from .models import AuditEvent


def _object(obj) -> tuple[str, str]:
    """(type, id) of the object an event is about: its uid where it has one (never a bare pk outside)."""
    if obj is None:
        return "", ""
    if isinstance(obj, tuple):
        kind, ident = obj
        return str(kind), str(ident)
    ident = getattr(obj, "uid", None) or getattr(obj, "public_id", None) or obj.pk
    return obj._meta.label_lower, str(ident)


def _round_key(round_) -> str:
    if round_ is None:
        return ""
    return round_ if isinstance(round_, str) else round_.key


def _organisation(organisation, obj) -> str:
    if organisation is None and obj is not None and not isinstance(obj, tuple):
        is_one = (
            obj._meta.label_lower == "accounts.organisation"
        )  # an event about the organisation itself
        organisation = obj if is_one else getattr(obj, "organisation", None)
    if organisation is None:
        return ""
    return organisation if isinstance(organisation, str) else organisation.name


def record(action: str, *, actor=None, obj=None, round=None, organisation=None, **details):
    """Append one event: `action` (e.g. "submission.uploaded"), who did it (a user; None or anonymous:
    the system), what about (a model instance, or a (type, id) pair), its round (a Round or its key),
    its organisation (an Organisation or a name; else the object's own), and JSON details."""
    if actor is not None and not getattr(actor, "is_authenticated", False):
        actor = None
    object_type, object_uid = _object(obj)
    return AuditEvent.objects.create(
        actor=actor,
        actor_name=actor.get_username() if actor is not None else "",
        action=action,
        object_type=object_type,
        object_uid=object_uid,
        round_key=_round_key(round),
        organisation=_organisation(organisation, obj),
        details=details,
    )
