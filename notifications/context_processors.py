"""`unread_notifications` for the page header: how many of the signed-in user's notifications in the
site are unread (one COUNT, only when the template reads it)."""

from django.utils.functional import SimpleLazyObject

from .models import Notification


def unread_count(user) -> int:
    return Notification.objects.filter(recipient=user, in_site=True, read_at__isnull=True).count()


def unread(request):
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {}
    return {"unread_notifications": SimpleLazyObject(lambda: unread_count(user))}
