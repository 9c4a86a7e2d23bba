"""Which submissions a user may see, in one place for the pages and the API: staff all; a round's reviewers
that round's; a member their organisations'; anyone what they uploaded themselves. Anything else answers 404."""

from django.db.models import Q

from .models import Submission


def visible_submissions(user):
    qs = Submission.objects.select_related("round", "submitter", "organisation")
    if not user.is_authenticated:
        return qs.none()
    if user.is_staff:
        return qs
    return qs.filter(
        Q(uploaded_by=user) | Q(organisation__memberships__user=user) | Q(round__reviewers=user)
    ).distinct()
