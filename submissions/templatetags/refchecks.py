"""{% reference_checks submission %}: each result's reference checks on the submission's page, with the staff's
buttons to ask for one."""

import json

from django import template

from leaderboard.models import Result
from submissions.refchecks import jobs

register = template.Library()


@register.inclusion_tag("refchecks/_submission.html", takes_context=True)
def reference_checks(context, submission):
    results = list(
        Result.objects.filter(system__submission=submission)
        .select_related("system", "benchmark")
        .order_by("system__key", "benchmark__position")
    )
    checks = jobs.by_result([r.pk for r in results])
    return {
        "submission": submission,
        "rows": [(r, checks.get(r.pk, [])) for r in results],
        "any_checks": any(checks.values()),
        "user": context.get("user"),
        "csrf_token": context.get("csrf_token"),
    }


@register.filter
def plain(value):
    """A probe's value as text: JSON for lists and dicts (shapes, versions), else as it is."""
    return json.dumps(value) if isinstance(value, dict | list) else value
