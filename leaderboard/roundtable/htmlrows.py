"""The round table's body rows as HTML, written here rather than in the template language.

A trick, kept because a target needs it. Target (issue 28): the round page's cold render, p95 under
300 ms for a 400-system round in bench/leaderboard.py. A round of 400 systems × 10 benchmarks is some
8,000 cells; the same markup as a template loop took most of a cold render. Measured with and without
in one run, in one process, cold renders alternating (bench catalogue's 400-system round, machine
shared, load 7 on 2 cores; the page's HTML identical byte for byte, newlines aside):
  these rows:         p50 264 ms, p95 516 ms
  the template loop:  p50 441 ms, p95 673 ms
and earlier, between two gunicorns (commit bc958bb): p50 670 -> 429 ms, p95 992 -> 617 ms. The
template loop misses the target wherever this meets it (about 40 % of a cold render more).

Each row comes from a ShownRow of layout.py: every text there is plain and escaped here, once. The
header row stays in templates/leaderboard/_round_table.html; keep the two in the same column order.
tests/leaderboard/test_leaderboard_table.py feeds these rows markup and checks that every text is escaped.
The words of the rows are looked up once per table in the page's language (`words`), not once per cell.
"""

from html import escape

from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext

from .layout import ShownCell, ShownRow


def _abbr(text: str, short: str) -> str:
    """A long text: its short form until focused, tapped or hovered (portal.css .abbr)."""
    if not short:
        return escape(text)
    return (
        f'<span class="abbr" tabindex="0"><span class="s" aria-hidden="true">{escape(short)}'
        f'</span><span class="f">{escape(text)}</span></span>'
    )


def words() -> dict[str, str]:
    """The rows' fixed words in the active language, escaped."""
    return {
        "not scored": escape(gettext("not scored")),
        "findings": escape(gettext("(findings: %(findings)s)")),
        "compare": escape(gettext("Compare %(system)s")),
        "its page": escape(gettext("Its description, results and logs")),
        "logs": escape(gettext("logs")),
        "description": escape(gettext("description")),
        "unchecked": escape(gettext("(price not yet checked)")),
    }


def _cell(c: ShownCell | None, w: dict[str, str]) -> str:
    if c is None:
        return '<td class="num"></td>'
    title = f' title="{escape(c["title"])}"' if c["title"] else ""
    text = (
        f'<span class="not-scored">{w["not scored"]}</span>'
        if c["not_scored"]
        else escape(c["text"])
    )
    flag = (
        '<span class="flag" aria-hidden="true">⚠</span><span class="visually-hidden"> '
        + w["findings"].replace("%(findings)s", escape(c["findings"]))
        + "</span>"
        if c["findings"]
        else ""
    )
    why = f'<span class="why">{escape(c["why"])}</span>' if c["why"] else ""
    return f'<td class="num"><a href="{escape(c["url"])}"{title}>{text}</a>{why}{flag}</td>'


def _organisation(r: ShownRow) -> str:
    """The row's submitter, linked to its organisation's page: every result of it across rounds."""
    if not r["organisation_url"]:
        return f'<span class="submitter">{escape(r["submitter"])}</span>'
    return (
        f'<a class="submitter" href="{escape(r["organisation_url"])}">{escape(r["submitter"])}</a>'
    )


def row_html(r: ShownRow, columns: set[str], w: dict[str, str] | None = None) -> str:
    """One <tr>: the system (with its compare box), a cell per benchmark, the descriptive columns."""
    w = w or words()
    name = f"{r['submitter']} {r['name']}" + (f" ({r['distinct']})" if r["distinct"] else "")
    distinct = f' <span class="distinct">{escape(r["distinct"])}</span>' if r["distinct"] else ""
    url = escape(r["url"])
    # The accelerators under the name, shown on a phone only (portal.css), where the Accelerator column is
    # a swipe away: a reader's first question of a time ("on how many of what?") is answered beside it.
    accelerators = r["accelerator_short"] or r["accelerator"]
    accelerators = f' <span class="acc">{escape(accelerators)}</span>' if accelerators else ""
    out = [
        f'<tr data-system="{escape(r["slug"])}" id="{escape(r["anchor"])}"><th scope="row" class="sys">'
        f'<input type="checkbox" name="s" value="{escape(r["slug"])}" form="compare-form" '
        f'aria-label="{w["compare"].replace("%(system)s", escape(name))}"> <a href="{url}" data-name '
        f'title="{w["its page"]}">{escape(r["name"])}</a>{distinct} '
        f"{_organisation(r)}{accelerators}</th>"
    ]
    out += [_cell(c, w) for c in r["cells"]]
    if "public_id" in columns:
        out.append(f'<td class="ids">{escape(r["public_id"])}</td>')
    if "availability" in columns:
        out.append(f'<td class="avail">{_abbr(r["availability"], r["availability_short"])}</td>')
    if "submitter" in columns:
        out.append(f"<td>{escape(r['submitter'])}</td>")
    if "nodes" in columns:
        out.append(f'<td class="num">{escape(r["nodes"])}</td>')
    for column in ("processor", "accelerator", "software"):
        if column in columns:
            out.append(f'<td class="clip">{_abbr(r[column], r[f"{column}_short"])}</td>')
    if "links" in columns:
        out.append(
            f'<td class="links"><a href="{url}#results-h">{w["logs"]}</a> '
            f'<a href="{url}#desc-h">{w["description"]}</a></td>'
        )
    if "cloud_scale" in columns:
        scale = ""
        if r["cloud_scale"]:
            scale = (
                f'<a href="{url}#cloud-scale" title="{escape(r["cloud_scale_note"])}">'
                f"{escape(r['cloud_scale'])}</a>"
            )
            if r["cloud_scale_unverified"]:
                scale += (
                    '<span aria-hidden="true">†</span>'
                    f'<span class="visually-hidden"> {w["unchecked"]}</span>'
                )
        out.append(f'<td class="num">{scale}</td>')
    if "power" in columns:
        out.append(f'<td class="num">{escape(r["power"])}</td>')
    out.append("</tr>")
    return "".join(out)


def rows_html(rows: list[ShownRow], columns: list[str]) -> SafeString:
    chosen, w = set(columns), words()
    return mark_safe("\n".join(row_html(r, chosen, w) for r in rows))  # every text escaped above
