"""Static files as whitenoise serves them: `collectstatic` writes each file under a name that
holds a hash of its content, with gzip (and, where the brotli module is installed, brotli)
copies beside it; pages link the hashed names, which whitenoise sends with a cache lifetime
of a year (a change makes a new name).

Where nothing was collected (the tests' live server, `make run`), a page links the plain name
and whitenoise or runserver serves it from the finders: no ValueError for a missing manifest.
"""

from whitenoise.storage import CompressedManifestStaticFilesStorage


class StaticStorage(CompressedManifestStaticFilesStorage):
    manifest_strict = False

    def stored_name(self, name):
        try:
            return super().stored_name(name)
        except ValueError:  # not collected: the plain name, which the finders serve
            return name
