"""Helpers the public pages share: chart data in a page, downloads."""

import json

from django.http import HttpResponse


def json_script(figure) -> str:
    """A plotly figure as JSON safe inside <script type="application/json">, or '' for no chart."""
    return "" if figure is None else json.dumps(figure, separators=(",", ":")).replace("<", "\\u003c")


def download(body: bytes, writer, filename: str) -> HttpResponse:
    response = HttpResponse(body, content_type=writer.content_type)
    response["Content-Disposition"] = f'attachment; filename="{filename}.{writer.extension}"'
    return response
