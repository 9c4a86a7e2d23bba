"""A staticfiles finder that serves plotly.js from the installed `plotly` Python package.

plotly.min.js (about 4.6 MB) is too large to keep in the repository; the pinned `plotly`
package ships it. This finder exposes it as the static file `vendor/plotly.min.js`, so
`{% static 'vendor/plotly.min.js' %}` works with runserver, in the tests' live server and
after `collectstatic`, and no page loads anything from a CDN.
"""

from pathlib import Path

from django.contrib.staticfiles.finders import BaseFinder
from django.core.checks import Error
from django.core.files.storage import FileSystemStorage

PLOTLY_STATIC_PATH = "vendor/plotly.min.js"


def plotly_js_path() -> Path | None:
    try:
        import plotly
    except ImportError:
        return None
    path = Path(plotly.__file__).resolve().parent / "package_data" / "plotly.min.js"
    return path if path.is_file() else None


class PlotlyFinder(BaseFinder):
    def check(self, **kwargs):
        if plotly_js_path() is None:
            return [
                Error(
                    "plotly.min.js was not found in the installed plotly package.",
                    hint="pip install -r requirements.txt (plotly is pinned there).",
                    id="leaderboard.E001",
                )
            ]
        return []

    def find(self, path, find_all=False, **kwargs):
        find_all = find_all or kwargs.get("all", False)
        source = plotly_js_path()
        if path != PLOTLY_STATIC_PATH or source is None:
            return [] if find_all else None
        return [str(source)] if find_all else str(source)

    def list(self, ignore_patterns):
        source = plotly_js_path()
        if source is not None:
            storage = FileSystemStorage(location=str(source.parent))
            storage.prefix = "vendor"
            yield "plotly.min.js", storage
