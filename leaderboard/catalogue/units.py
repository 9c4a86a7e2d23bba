"""Units: the portal stores times to train in seconds and shows them in minutes.

Plain Python, no Django, so that submissions (its rules included) can use it too.
"""

SECONDS_PER_MINUTE = 60


def minutes(seconds):
    """`seconds` in minutes; None stays None. Takes a number or a pandas Series of them."""
    return None if seconds is None else seconds / SECONDS_PER_MINUTE


def energy(joules) -> str:
    """Energy to train in words, always in kJ ('' for None): the table, the runs and the exports give kJ, and
    one page in two units (a result's 12.3 MJ above its runs' 12,300 kJ) made readers convert."""
    if joules is None:
        return ""
    return f"{joules / 1e3:,.1f} kJ"
