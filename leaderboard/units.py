"""Units: the portal stores times to train in seconds and shows them in minutes.

Plain Python, no Django, so that submissions (its rules included) can use it too.
"""

SECONDS_PER_MINUTE = 60


def minutes(seconds):
    """`seconds` in minutes; None stays None. Takes a number or a pandas Series of them."""
    return None if seconds is None else seconds / SECONDS_PER_MINUTE


def energy(joules) -> str:
    """Energy to train in words: kJ, or MJ from 10 MJ on ('' for None)."""
    if joules is None:
        return ""
    if abs(joules) >= 10e6:
        return f"{joules / 1e6:,.1f} MJ"
    return f"{joules / 1e3:,.1f} kJ"
