"""What error pages and error mails may show, and in what form: the API answers its errors in JSON
(`{"detail": ...}`, as its schema says every error does), the site with its pages.

- REST framework's handler (api_exception_handler): 503 for a database outage, 507 for a full disk,
  each with Retry-After.
- Django's handlers (portal/urls.py handler400/403/404/500), for what no view answered itself: a body
  past DATA_UPLOAD_MAX_MEMORY_SIZE (413), a CSRF refusal, an unknown address, an internal error.
"""

import errno
import re

from django.core.exceptions import RequestDataTooBig
from django.db import InterfaceError, OperationalError
from django.http import HttpResponse, JsonResponse
from django.utils.translation import gettext
from django.views import defaults
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
        # str(): a lazy setting (django-axes' AXES_USERNAME_FORM_FIELD) passes for a str, not for re.
        return (
            mask_url_passwords(str(value), self.cleansed_substitute)
            if isinstance(value, str)
            else value
        )

    def cleanse_special_types(self, request, value):
        value = super().cleanse_special_types(request, value)
        if isinstance(value, str):
            return mask_url_passwords(str(value), self.cleansed_substitute)
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
                {
                    "detail": gettext(
                        "The portal's database is not answering just now; try again shortly."
                    )
                },
                status=status.HTTP_503_SERVICE_UNAVAILABLE,
            ),
            DATABASE_RETRY_AFTER_S,
        )
    elif isinstance(exc, OSError) and exc.errno in _DISK_FULL:
        answer, retry_after = (
            Response(
                {
                    "detail": gettext(
                        "The portal's disk is full just now; what it holds of your upload is kept. "
                        "Try again shortly from the offset it answers."
                    )
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


def _api(request) -> bool:
    return request.path.startswith("/api/")


def bad_request(request, exception=None):
    if isinstance(exception, RequestDataTooBig):
        detail = gettext(
            "The request's body is too large for the portal to read; bundles go in parts."
        )
        if _api(request):
            return JsonResponse({"detail": detail}, status=413)
        return HttpResponse(detail, status=413, content_type="text/plain; charset=utf-8")
    if _api(request):
        return JsonResponse({"detail": gettext("Bad request.")}, status=400)
    return defaults.bad_request(request, exception)


def permission_denied(request, exception=None):
    if _api(request):
        return JsonResponse({"detail": gettext("You may not do this.")}, status=403)
    return defaults.permission_denied(request, exception)


def page_not_found(request, exception=None):
    if _api(request):
        return JsonResponse({"detail": gettext("Not found.")}, status=404)
    return defaults.page_not_found(request, exception)


def server_error(request):
    if _api(request):
        return JsonResponse(
            {
                "detail": gettext(
                    "The portal failed on this request; it is logged. Try again later."
                )
            },
            status=500,
        )
    return defaults.server_error(request)
