"""What error pages and error mails may show."""

import re

from django.views.debug import SafeExceptionReporterFilter

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
