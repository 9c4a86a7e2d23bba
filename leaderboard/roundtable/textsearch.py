"""Free-text search (`?q=`) over systems: what a query's words are, and one filter for all of them.

Every search of the portal (the API's `q` on results and systems, the home page's) reads its words
here. The text is cut to MAX_LENGTH characters and to MAX_WORDS distinct words, so that any query
costs at most a fixed number of lookups; the words become one Q (every word in one of the fields),
given to a single filter(). Chaining one filter() per word cost time quadratic in the words (each
call copies the query built so far): 1,900 words held a web process 12-25 s.
"""

from django.db.models import Q

MAX_LENGTH = 200  # characters of `q` read
MAX_WORDS = 8  # distinct words of `q` read, case ignored

# The system's fields a word may appear in.
FIELDS = (
    "submitter__name",
    "submitter__organisation",
    "name",
    "key",
    "accelerator_model",
    "processor_model",
    "framework",
)


def words(q: str) -> list[str]:
    """The words of `q` that a search uses: at most MAX_WORDS distinct ones (case ignored) of its
    first MAX_LENGTH characters, in order."""
    seen = {}
    for word in q[:MAX_LENGTH].split():
        seen.setdefault(word.casefold(), word)
        if len(seen) == MAX_WORDS:
            break
    return list(seen.values())


def matching(q: str, prefix: str = "", fields=FIELDS) -> Q:
    """A Q over System (or, with `prefix` such as "system__", over a model that leads to one): every
    word of `q` in at least one of `fields`. Q() for a query without words."""
    match = Q()
    for word in words(q):
        any_field = Q()
        for name in fields:
            any_field |= Q(**{f"{prefix}{name}__icontains": word})
        match &= any_field
    return match
