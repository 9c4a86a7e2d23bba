"""Redoc's bundle (drf-spectacular-sidecar's redoc.standalone.js) as the API's documentation page loads it:
the same file but for its makers' logo. Redoc's sidebar always draws that logo from their site
(https://cdn.redoc.ly/redoc/logo-mini.svg), which the page's Content-Security-Policy refuses: an error in
the console of every visit (issue 39). Here the logo's address is an empty SVG image of the page's own
(a data: URL, which the policy allows); portal.css hides it either way.

The file is read and rewritten on the first request of each process and kept, as portal/client.py keeps the
client's archive. After an upgrade of the sidecar that moved the logo, `bundle` raises: the docs page's
browser test fails rather than the console filling again.
"""

import functools
import hashlib

from django.contrib.staticfiles import finders
from django.http import HttpResponse, HttpResponseNotModified
from django.views.decorators.http import require_safe

SIDECAR_BUNDLE = "drf_spectacular_sidecar/redoc/bundles/redoc.standalone.js"
LOGO = b"https://cdn.redoc.ly/redoc/logo-mini.svg"
EMPTY_IMAGE = b"data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg'/%3E"


@functools.cache
def bundle() -> tuple[bytes, str]:
    """The rewritten bundle and its ETag."""
    path = finders.find(SIDECAR_BUNDLE)
    if not path:
        raise FileNotFoundError(
            f"{SIDECAR_BUNDLE}: pip install -r requirements.txt (drf-spectacular-sidecar)"
        )
    source = open(path, "rb").read()
    if source.count(LOGO) != 1:
        raise ValueError(
            f"{SIDECAR_BUNDLE} names {LOGO.decode()} {source.count(LOGO)} times, not once"
        )
    body = source.replace(LOGO, EMPTY_IMAGE)
    return body, '"' + hashlib.sha256(body).hexdigest()[:32] + '"'


@require_safe
def redoc_bundle(request):
    body, etag = bundle()
    if request.headers.get("If-None-Match") == etag:
        response = HttpResponseNotModified()
    else:
        response = HttpResponse(body, content_type="text/javascript; charset=utf-8")
    response["ETag"] = etag
    response["Cache-Control"] = "public, max-age=86400"
    return response
