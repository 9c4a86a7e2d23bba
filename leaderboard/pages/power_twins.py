"""AC and DC twins: one machine published twice by MLPerf Power, its power measured two ways.

v4.0's Sustainable Metal Cloud published the same H100 systems from three folders: timed alone
(smc), with each node's power measured at the wall, before its power supplies (smc-ac-power), and
measured on the DC side, after them (smc-dc-power). A reader who meets two rows of one machine with
different energies needs to know why. A folder or system name that says "AC-Power" or "DC-Power"
marks a twin; `explanation` says what its measurement means, wherever such a result appears.
Pure but for its words, marked for translation (gettext_lazy).
"""

import re

from django.utils.translation import gettext_lazy as _

MEASURED = re.compile(r"(?<![a-z])(ac|dc)[-_ ]?power(?![a-z])", re.IGNORECASE)

EXPLANATIONS = {
    "AC": _(
        "Power measured at the wall (AC), before the power supplies: it includes their conversion "
        "losses. The same machine was also published with its power measured on the DC side, after the "
        "power supplies, which reads lower; each has runs of its own."
    ),
    "DC": _(
        "Power measured on the DC side, after the power supplies: it leaves out their conversion "
        "losses. The same machine was also published with its power measured at the wall (AC), which "
        "reads higher; each has runs of its own."
    ),
}


def measured_at(*names: str) -> str:
    """'AC' or 'DC' where one of the names (a submitter folder, a system's name) says so, else ''."""
    for name in names:
        found = MEASURED.search(name or "")
        if found:
            return found.group(1).upper()
    return ""


def explanation(*names: str) -> str:
    """What an AC- or DC-measured twin's energy means, or '' for a result of no twin."""
    return EXPLANATIONS.get(measured_at(*names), "")


ROUND_NOTE = _(
    "AC-Power and DC-Power: one machine published twice, its power measured at the wall (AC, with the "
    "power supplies' losses) and after its power supplies (DC, without them, so lower). Each has runs of "
    "its own; compare energies of the same measurement."
)
