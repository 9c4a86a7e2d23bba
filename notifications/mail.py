"""A notification as a mail: plain text and HTML, a List-Unsubscribe header (one click, RFC 8058) and
the same signed link in its text. Sent through Django's mail framework (EMAIL_URL in settings)."""

from django.conf import settings
from django.core.mail import EmailMultiAlternatives
from django.template.loader import render_to_string
from django.urls import reverse

from .preferences import unsubscribe_token


def absolute(path: str) -> str:
    return settings.SITE_URL.rstrip("/") + path if path.startswith("/") else path


def message(notification, address: str) -> EmailMultiAlternatives:
    unsubscribe = absolute(
        reverse(
            "notifications:unsubscribe",
            args=[unsubscribe_token(notification.recipient_id, notification.kind)],
        )
    )
    context = {
        "n": notification,
        "link": absolute(notification.url) if notification.url else "",
        "unsubscribe": unsubscribe,
        "preferences": absolute(reverse("notifications:preferences")),
    }
    mail = EmailMultiAlternatives(
        subject=f"[Results portal] {notification.title}",
        body=render_to_string("notifications/mail.txt", context),
        to=[address],
        headers={
            "List-Unsubscribe": f"<{unsubscribe}>",
            "List-Unsubscribe-Post": "List-Unsubscribe=One-Click",
            "X-Portal-Event": notification.key,
        },
    )
    mail.attach_alternative(render_to_string("notifications/mail.html", context), "text/html")
    return mail
