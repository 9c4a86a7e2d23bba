"""Units: the portal stores times to train in seconds and shows them in minutes.

Plain Python, no Django, so that submissions (its rules included) can use it too.
"""

SECONDS_PER_MINUTE = 60


def minutes(seconds):
    """`seconds` in minutes; None stays None. Takes a number or a pandas Series of them."""
    return None if seconds is None else seconds / SECONDS_PER_MINUTE
