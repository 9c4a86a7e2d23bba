"""Which submissions a user may see, for the pages and the API. The rule is leaderboard.access.policy's (one place
for every kind of record): staff all; a round's reviewers that round's; a member their organisations', and
during a round's review every submission of a round their organisation submitted to; anyone what they
uploaded themselves. Anything else answers 404."""

from leaderboard.access import policy

from .models import Submission


def visible_submissions(user, now=None):
    return Submission.objects.select_related("round", "submitter", "organisation").filter(
        policy.viewer(user, now).submission_filter()
    )
