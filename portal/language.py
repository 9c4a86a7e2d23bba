"""The language a request is answered in, English or Simplified Chinese (settings.LANGUAGES), and the
links of the page header's switcher.

The choice, first that says one: `?lang=` in the address (a link shared in a language opens in it, and the
choice is kept in the `lang` cookie), the cookie, the browser's Accept-Language, English. An API client
sends no cookie: it is answered in its Accept-Language's language. Addresses are the same in every
language: a bookmark, a data URL or a test's URL never changes (Django's i18n_patterns would put the
language in the path instead, and its middleware then answers every address without a prefix in English
whatever Accept-Language says).

A signed-in user's choice on the site (`?lang=`, or the cookie when they have chosen none yet) is also the
language of their notifications (RememberLanguageMiddleware; notifications.preferences).
"""

from urllib.parse import urlencode

from django.conf import settings
from django.utils import translation
from django.utils.cache import patch_vary_headers

from notifications import preferences

PARAM = "lang"


def chosen(value: str | None) -> str | None:
    """The supported language a `?lang=` value names ('zh-hans', 'zh', 'en'...), or None."""
    if not value or len(value) > 20:
        return None
    try:
        return translation.get_supported_language_variant(value.lower())
    except LookupError:
        return None


class LanguageMiddleware:
    """Activates the request's language for its answer, as Django's LocaleMiddleware does without a
    language in the path, and keeps a `?lang=` choice in the cookie."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        asked = chosen(request.GET.get(PARAM))
        language = asked or translation.get_language_from_request(request)
        translation.activate(language)
        request.LANGUAGE_CODE = translation.get_language()
        try:
            response = self.get_response(request)
        finally:
            # The thread's next work (another request, a test's direct call) starts in the default language.
            translation.deactivate()
        patch_vary_headers(response, ("Accept-Language", "Cookie"))
        response.headers.setdefault("Content-Language", request.LANGUAGE_CODE)
        if asked and request.COOKIES.get(settings.LANGUAGE_COOKIE_NAME) != asked:
            response.set_cookie(
                settings.LANGUAGE_COOKIE_NAME,
                asked,
                max_age=settings.LANGUAGE_COOKIE_AGE,
                secure=settings.LANGUAGE_COOKIE_SECURE,
                samesite=settings.LANGUAGE_COOKIE_SAMESITE,
            )
        return response


class RememberLanguageMiddleware:
    """After authentication: a signed-in user's `?lang=` choice becomes their notifications' language
    (written only when it changes), and so does the cookie's for a user who has none yet; the session
    remembers that the cookie was looked at, so a page costs no query for it."""

    SEEN = "language_remembered"

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if request.user.is_authenticated:
            asked = chosen(request.GET.get(PARAM))
            kept = chosen(request.COOKIES.get(settings.LANGUAGE_COOKIE_NAME))
            if asked:
                preferences.choose_language(request.user, asked)
            elif kept and request.session.get(self.SEEN) != kept:
                preferences.choose_language(request.user, kept, unless_chosen=True)
                request.session[self.SEEN] = kept
        return self.get_response(request)


def switcher(request):
    """`languages`: for each language, its name in itself, this page's address in it and whether it is
    the page's own (the header's switcher; a plain link, so it works without JavaScript)."""
    if request is None:
        return {}
    current = translation.get_language()
    query = [
        (key, value) for key, values in request.GET.lists() for value in values if key != PARAM
    ]
    links = []
    for code, name in settings.LANGUAGES:
        address = request.path + "?" + urlencode([*query, (PARAM, code)])
        links.append({"code": code, "name": name, "url": address, "current": code == current})
    return {"languages": links}
