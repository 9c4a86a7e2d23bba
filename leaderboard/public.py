"""The public visibility rule, in one place for pages, charts, exports and the API.

Only published results of published systems are public, and never one with blocking
findings: errors count as blocking unless the result's findings are advisory (imported
history). A public result with any findings is marked on the pages.
"""

from django.db.models import Q

from .models import Result, Run, System

VISIBLE = Q(published=True, system__published=True) & (Q(error_count=0) | Q(advisory=True))


def results():
    return Result.objects.filter(VISIBLE)


def systems():
    return System.objects.filter(published=True, results__in=results()).distinct()


def runs():
    return Run.objects.filter(result__in=results())


def findings_note(error_count: int, warning_count: int, advisory: bool) -> str:
    """'' for a clean result, else what a reader should know, e.g. '2 errors (advisory), 1 warning'."""
    parts = []
    if error_count:
        parts.append(
            f"{error_count} error{'s' if error_count != 1 else ''}"
            + (" (advisory)" if advisory else "")
        )
    if warning_count:
        parts.append(f"{warning_count} warning{'s' if warning_count != 1 else ''}")
    return ", ".join(parts)
