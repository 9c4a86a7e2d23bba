"""A staticfiles finder for the plotly.js bundles, which are too large to keep in the repository.

- `vendor/plotly-basic.min.js` (scatter and bar, about 1.2 MB, 0.4 MB gzipped): what the pages
  draw with. It comes from npm's `plotly.js-basic-dist-min` (package.json, installed by `make
  setup` into node_modules/), at the plotly.js version the Python `plotly` package ships.
  Where npm was not run it is the full bundle under this name, so the charts still draw
  (system check leaderboard.W002 says so).
- `vendor/plotly.min.js` (every trace type, about 4.8 MB): from the installed `plotly` package.

Both work with runserver, in the tests' live server, under whitenoise and after
`collectstatic`, and no page loads anything from a CDN.
"""

from pathlib import Path

from django.conf import settings
from django.contrib.staticfiles.finders import BaseFinder
from django.core.checks import Error, Warning
from django.core.files import File
from django.core.files.storage import FileSystemStorage

PLOTLY_STATIC_PATH = "vendor/plotly.min.js"
PLOTLY_BASIC_STATIC_PATH = "vendor/plotly-basic.min.js"


def plotly_js_path() -> Path | None:
    try:
        import plotly
    except ImportError:
        return None
    path = Path(plotly.__file__).resolve().parent / "package_data" / "plotly.min.js"
    return path if path.is_file() else None


def plotly_basic_js_path() -> Path | None:
    path = (
        Path(settings.BASE_DIR)
        / "node_modules"
        / "plotly.js-basic-dist-min"
        / "plotly-basic.min.js"
    )
    return path if path.is_file() else None


def _sources() -> dict[str, Path]:
    full = plotly_js_path()
    basic = plotly_basic_js_path() or full
    found = {PLOTLY_STATIC_PATH: full, PLOTLY_BASIC_STATIC_PATH: basic}
    return {name: path for name, path in found.items() if path is not None}


class _Named(FileSystemStorage):
    """One file of another folder under a name of ours (the basic bundle may be the full one)."""

    def __init__(self, source: Path):
        super().__init__(location=str(source.parent))
        self.source = source
        self.prefix = "vendor"

    def path(self, name):
        return str(self.source)

    def open(self, name, mode="rb"):
        return File(open(self.source, mode), name=self.source.name)


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
        if plotly_basic_js_path() is None:
            return [
                Warning(
                    "node_modules/plotly.js-basic-dist-min is missing: pages load the full plotly bundle "
                    "(4.8 MB instead of 1.2 MB).",
                    hint="Run `make setup` (npm install, package.json).",
                    id="leaderboard.W002",
                )
            ]
        return []

    def find(self, path, find_all=False, **kwargs):
        find_all = find_all or kwargs.get("all", False)
        source = _sources().get(path)
        if source is None:
            # [] in both modes, as Django's own finders answer: `finders.find` takes any other
            # value as a match, and whitenoise (DEBUG) then failed on None with a 500.
            return []
        return [str(source)] if find_all else str(source)

    def list(self, ignore_patterns):
        for name, source in _sources().items():
            yield name.removeprefix("vendor/"), _Named(source)
