"""Requests the portal refuses before any view reads them."""

from django.http import HttpResponseBadRequest, JsonResponse
from django.utils.translation import gettext, gettext_noop

MESSAGE = gettext_noop("The address holds a NUL character (%00): no page of the portal has one.")


class RefuseNulMiddleware:
    """A NUL character in the path or the query string answers 400. PostgreSQL neither stores nor
    finds a NUL: a view that looked one up (a round key, a search) ended as a 500, and no address or
    filter of the portal holds one. The API answers in JSON, as its schema says every 400 does."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if "\x00" in request.path or any(
            "\x00" in key or "\x00" in value
            for key, values in request.GET.lists()
            for value in values
        ):
            message = gettext(MESSAGE)
            if request.path.startswith("/api/"):
                return JsonResponse({"detail": message}, status=400)
            return HttpResponseBadRequest(message, content_type="text/plain")
        return self.get_response(request)
