"""CSV for the API (`?format=csv` or `Accept: text/csv`), beside JSON and the browsable API.

One line per item of a list (the `results` of a page), one column per field in the serializer's
order; nested values (a round's benchmarks, a run's eval curve) are written as JSON in their cell.
A page's next page is named in a `Link: <...>; rel="next"` header, as GitHub's API does.
"""

import csv
import io
import json

from rest_framework.renderers import BaseRenderer

from ..roundtable.exports import neutralise


def _cell(value):
    if isinstance(value, (dict, list)):
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    if value is None:
        return ""
    return neutralise(value)


def _serializer_fields(view) -> list[str]:
    """The columns of an empty list: its serializer's fields, so that the header still says them."""
    try:
        return list(view.get_serializer().fields)
    except Exception:  # noqa: BLE001 - a view without a serializer: no header, as before
        return []


class CSVRenderer(BaseRenderer):
    media_type = "text/csv"
    format = "csv"
    charset = "utf-8"

    def render(self, data, accepted_media_type=None, renderer_context=None):
        response = (renderer_context or {}).get("response")
        if isinstance(data, dict) and isinstance(data.get("results"), list):
            if data.get("next") and response is not None:
                response["Link"] = f'<{data["next"]}>; rel="next"'
            rows = data["results"]
        elif isinstance(data, list):
            rows = data
        elif data is None:
            return b""
        else:
            rows = [data]
        columns = list(dict.fromkeys(k for row in rows if isinstance(row, dict) for k in row))
        if not columns and response is not None and response.status_code == 200:
            columns = _serializer_fields((renderer_context or {}).get("view"))
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(columns)
        for row in rows:
            if isinstance(row, dict):
                writer.writerow([_cell(row.get(c)) for c in columns])
        return out.getvalue().encode()
