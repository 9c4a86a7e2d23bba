"""Who submitted to a round: the one rule that peer review's visibility and the right to object share
(leaderboard/policy.py).

An organisation submitted to a round when it has a submission there that counts: one that is neither
failed (nothing in it could be read: a junk upload) nor withdrawn. Being received, checked, invalid,
valid or published counts. An organisation whose every submission failed or was withdrawn did not
submit: it may not read the others' unpublished work during review, nor object to it.

The statuses are the write side's (submissions.Submission.Status): the leaderboard names them as
strings, never importing submissions.
"""

from django.db.models import Q

from .models import Round

# submissions.Submission.Status.FAILED and WITHDRAWN.
NOT_COUNTING = ("failed", "withdrawn")


COUNTS = ~Q(status__in=NOT_COUNTING) & Q(organisation__isnull=False)


def _counting_submissions():
    """The submissions that count, reached through Round's reverse relation (the model is the write
    side's). Filtered on the submission itself: a negated filter through Round ("rounds without a
    failed submission") would mean something else."""
    return Round._meta.get_field("submissions").related_model.objects.filter(COUNTS)


def organisation_ids(round_: Round) -> set[int]:
    """The organisations that submitted to `round_`."""
    return set(
        _counting_submissions()
        .filter(round=round_)
        .values_list("organisation_id", flat=True)
        .distinct()
    )


def rounds_of(organisation_ids) -> Q:
    """A Q over Round: the rounds that any of `organisation_ids` submitted to."""
    return Q(
        pk__in=_counting_submissions()
        .filter(organisation_id__in=organisation_ids)
        .values("round_id")
    )
