"""Helpers the public pages share: chart data in a page, downloads."""

import json
import re
import unicodedata
from urllib.parse import quote

from django.http import HttpResponse
from django.utils.http import content_disposition_header


def json_script(figure) -> str:
    """A plotly figure as JSON safe inside <script type="application/json">, or '' for no chart."""
    return (
        "" if figure is None else json.dumps(figure, separators=(",", ":")).replace("<", "\\u003c")
    )


def download(body: bytes, writer, filename: str) -> HttpResponse:
    response = HttpResponse(body, content_type=writer.content_type)
    response["Content-Disposition"] = attachment(f"{filename}.{writer.extension}")
    return response


def attachment(filename: str) -> str:
    """The Content-Disposition of a download whose name holds text from a bundle (a submitter's or a system's
    name), per RFC 6266: `filename` in plain ASCII with anything else (quotes, newlines, other scripts) replaced,
    for old clients, and, where that differs, the exact name in `filename*` (RFC 5987), which clients prefer.
    A newline or a quote in a header would otherwise be a 500 or a broken name."""
    ascii_name = unicodedata.normalize("NFKD", filename).encode("ascii", "ignore").decode()
    fallback = re.sub(r"[^A-Za-z0-9._-]+", "_", ascii_name).strip("_") or "download"
    header = content_disposition_header(True, fallback)
    if fallback != filename:
        header += f"; filename*=UTF-8''{quote(filename, safe='')}"
    return header
