"""What error pages and error mails may show, and what the API answers when the database or the disk fails."""

import errno
import re

from django.db import InterfaceError, OperationalError
from django.views.debug import SafeExceptionReporterFilter
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import exception_handler, set_rollback

# scheme://user:password@host -> the password replaced
_URL_PASSWORD = re.compile(r"(?P<head>\b[a-z][a-z0-9+.-]*://[^:/@\s]*:)[^@\s]+(?=@)", re.IGNORECASE)


def mask_url_passwords(text: str, mask: str = "********") -> str:
    return _URL_PASSWORD.sub(lambda m: m["head"] + mask, text)


class SecretsFilter(SafeExceptionReporterFilter):
    """Django's filter hides settings and variables by their names (KEY, PASS, TOKEN, ...). A URL's
    password hides under any name (CELERY_BROKER_URL, a `url` local of the broker's client): it is
    masked wherever it appears, in settings and in the traceback's local variables."""

    def cleanse_setting(self, key, value):
        value = super().cleanse_setting(key, value)
        return (
            mask_url_passwords(value, self.cleansed_substitute) if isinstance(value, str) else value
        )

    def cleanse_special_types(self, request, value):
        value = super().cleanse_special_types(request, value)
        if isinstance(value, str):
            return mask_url_passwords(value, self.cleansed_substitute)
        if isinstance(value, (dict, list, tuple, set)):  # shown as their repr: mask that
            text = repr(value)
            masked = mask_url_passwords(text, self.cleansed_substitute)
            return masked if masked != text else value
        return value


# A database that does not answer, or a disk that is full, is the site's fault and passes: the API says so
# in JSON, with when to try again, instead of an HTML 500 (clients retry on Retry-After; a chunked upload
# resumes at the offset the portal holds, which such a failure never moves).
DATABASE_RETRY_AFTER_S = 30
DISK_RETRY_AFTER_S = 60
_DISK_FULL = {errno.ENOSPC, errno.EDQUOT}


def api_exception_handler(exc, context):
    """REST framework's handler, and 503 for a database outage, 507 for a full disk."""
    response = exception_handler(exc, context)
    if response is not None:
        return response
    if isinstance(exc, (OperationalError, InterfaceError)):
        answer, retry_after = (
            Response(
                {"detail": "The portal's database is not answering just now; try again shortly."},
                status=status.HTTP_503_SERVICE_UNAVAILABLE,
            ),
            DATABASE_RETRY_AFTER_S,
        )
    elif isinstance(exc, OSError) and exc.errno in _DISK_FULL:
        answer, retry_after = (
            Response(
                {
                    "detail": "The portal's disk is full just now; what it holds of your upload is kept. "
                    "Try again shortly from the offset it answers."
                },
                status=status.HTTP_507_INSUFFICIENT_STORAGE,
            ),
            DISK_RETRY_AFTER_S,
        )
    else:
        return None
    set_rollback()
    answer["Retry-After"] = str(retry_after)
    return answer
