"""A notification as a mail: plain text and HTML, a List-Unsubscribe header (one click, RFC 8058) and
the same signed link in its text. Sent through Django's mail framework (EMAIL_URL in settings).

`digest` is several notifications of one recipient in one mail (tasks.send_mail: a recipient who was
mailed less than NOTIFY_DIGEST_WINDOW_S ago, or whose mails piled up while the server was down, gets
what is pending as one mail): each listed with its link, and an unsubscribe of the kinds it lists.

Rendered in the active language: tasks.send_mail activates the recipient's."""

from django.conf import settings
from django.core.mail import EmailMultiAlternatives
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.translation import gettext, ngettext

from ..preferences import unsubscribe_token


def absolute(path: str) -> str:
    return settings.SITE_URL.rstrip("/") + path if path.startswith("/") else path


def _unsubscribe(user_id: int, kinds) -> str:
    return absolute(reverse("notifications:unsubscribe", args=[unsubscribe_token(user_id, kinds)]))


def _mail(subject, template, context, address, unsubscribe, headers) -> EmailMultiAlternatives:
    context |= {
        "unsubscribe": unsubscribe,
        "preferences": absolute(reverse("notifications:preferences")),
    }
    mail = EmailMultiAlternatives(
        subject=gettext("[Results portal] %(subject)s") % {"subject": subject},
        body=render_to_string(f"notifications/{template}.txt", context),
        to=[address],
        headers={
            "List-Unsubscribe": f"<{unsubscribe}>",
            "List-Unsubscribe-Post": "List-Unsubscribe=One-Click",
            **headers,
        },
    )
    mail.attach_alternative(
        render_to_string(f"notifications/{template}.html", context), "text/html"
    )
    return mail


def message(notification, address: str) -> EmailMultiAlternatives:
    return _mail(
        notification.title,
        "mail",
        {"n": notification, "link": absolute(notification.url) if notification.url else ""},
        address,
        _unsubscribe(notification.recipient_id, notification.kind),
        {"X-Portal-Event": notification.key},
    )


def digest(notifications: list, address: str) -> EmailMultiAlternatives:
    """One mail for several notifications of one recipient, oldest first."""
    first, more = notifications[0], len(notifications) - 1
    items = [(n, absolute(n.url) if n.url else "") for n in notifications]
    return _mail(
        ngettext("%(title)s, and %(more)s more", "%(title)s, and %(more)s more", more)
        % {"title": first.title, "more": more},
        "digest",
        {"items": items, "count": len(notifications)},
        address,
        _unsubscribe(first.recipient_id, {n.kind for n in notifications}),
        {"X-Portal-Digest": str(len(notifications))},
    )
