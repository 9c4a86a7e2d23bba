"""A log page's lines as HTML, written here rather than in the template language.

A trick, kept because a target needs it. Target (issue 28): Lighthouse performance >= 95 on the log
page, whose page holds 1,000 lines. Measured with and without in one run, in one process, the same page
of a 1,000-line MLLOG log written alternately by lines_html and by the same markup as a template loop
(the HTML identical byte for byte, newlines aside), 30 each, load 12 on 2 cores:
  lines_html:         p50  12.6 ms, p95  23.1 ms
  the template loop:  p50 132.2 ms, p95 305.3 ms
Lighthouse on the log page went from 89 to 98 with this and the blocks of CHUNK lines laid out when near
the screen (commit 49d38e0: blocking time 350 ms -> none flagged; the server's answer for page 1 about
240 -> 150 ms). Lighthouse with the template loop and the blocks alone was not measured: the loop's
100-300 ms of server time at this load is what the figure above puts at stake.

Every piece of text is escaped here (tests/leaderboard/test_log_viewer.py feeds it markup).
"""

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from . import logview

CHUNK = 100  # lines per block that the browser lays out only when near the screen (portal.css)


def lines_html(page: logview.Page, target: int) -> SafeString:
    """The page's lines as HTML. Each line: its number (a link to itself), its text with the record's key
    and value picked out, and what findings say of it; blocks of CHUNK lines."""
    out = []
    for i, line in enumerate(page.lines):
        if i % CHUNK == 0:
            out.append('<div class="chunk">')
        classes = "ln" + (" rec" if line.record else "") + (" flagged" if line.marks else "")
        classes += " target" if line.number == target else ""
        n = line.number
        out.append(
            f'<div id="L{n}" class="{classes}"><a class="no" href="?line={n}#L{n}" aria-label="Line {n}">{n}</a>'
            "<code>"
        )
        for piece, role in line.parts:
            out.append(f'<span class="{role}">{escape(piece)}</span>' if role else escape(piece))
        if line.cut:
            out.append(
                f'<span class="cut"> … {line.cut} more byte{"s" if line.cut != 1 else ""}</span>'
            )
        out.append("</code>")
        for f in line.marks:
            severity = escape(f.get("severity", ""))
            out.append(
                f'<span class="note"><span class="sev sev-{severity}">{severity}</span> '
                f"{escape(f.get('message', ''))}</span>"
            )
        out.append("</div>\n")
        if i % CHUNK == CHUNK - 1 or i == len(page.lines) - 1:
            out.append("</div>")
    return mark_safe("".join(out))  # every piece of text above is escaped
