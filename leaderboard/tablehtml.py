"""The round table's body rows as HTML, written in Python.

A large round has 400 systems × 10 benchmarks; through the template engine its rows took
about 0.3 s to render, here about a tenth of that. Everything that comes from data is
escaped (html.escape); the markup is the same as the rest of the table in
templates/leaderboard/_round_results.html.
"""

from html import escape

from .tables import Bench, Row
from .tableview import TableView


def _truncate(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _hardware(count, model: str) -> str:
    short = _truncate(model, 26)
    title = f' title="{escape(model)}"' if short != model else ""
    prefix = f"{count} × " if count else ""
    return f'<td class="hw"{title}>{prefix}{escape(short)}</td>'


def _number(value, speedup: bool) -> str:
    return f"{value:,.2f}×" if speedup else f"{value:,.2f}"


def rows_html(view: TableView, rows: list[Row], benches: list[Bench], *, cloud_scale: bool, power: bool) -> str:
    out = []
    show = view.show
    speedup_of = {b.key: show == "speedup" and b.has_reference for b in benches}
    for row in rows:
        slug = escape(row.slug)
        label = escape(f"{row.submitter} {row.name}")
        software = _truncate(row.framework, 28)
        software_title = f' title="{escape(row.framework)}"' if software != row.framework else ""
        parts = [
            f'<tr data-system="{slug}">',
            f'<td><input type="checkbox" name="s" value="{slug}" form="compare-form" id="cmp-{row.system_id}" '
            f'aria-label="Compare {label}"></td>',
            f"<td>{escape(row.submitter)}</td>",
            f'<th scope="row"><a href="{escape(row.url)}">{escape(row.name)}</a></th>',
            _hardware(row.processor_count, row.processor_model),
            _hardware(row.accelerator_count, row.accelerator_model),
            f'<td class="software"{software_title}>{escape(software)}</td>',
        ]
        for bench in benches:
            cell = row.cells.get(bench.key)
            if cell is None:
                parts.append('<td class="num"></td>')
                continue
            value = view.cell_value(row, bench)
            text = "" if value is None else _number(value, speedup_of[bench.key] and bool(cell.speedup))
            notes = [f"{cell.public_id}."] if cell.public_id else []
            if cell.not_scored_because:
                text = '<span class="not-scored">not scored</span>'
                notes.append(f"Not scored: {cell.not_scored_because}")
            if cell.findings:
                notes.append(f"Findings: {cell.findings}.")
            if cell.energy_j is not None and show != "energy":
                notes.append(f"Energy to train: {cell.energy_kj:,.0f} kJ.")
            title = f' title="{escape(" ".join(notes))}"' if notes else ""
            flag = (f'<span class="flag" aria-hidden="true">⚠</span>'
                    f'<span class="visually-hidden"> (findings: {escape(cell.findings)})</span>') if cell.findings else ""
            parts.append(f'<td class="num"><a href="{escape(cell.url)}"{title}>{text}</a>{flag}</td>')
        if cloud_scale:
            if row.cloud_scale_note:
                value = "n/a" if row.cloud_scale is None else f"{row.cloud_scale:.2f}"
                mark = ('<span aria-hidden="true">†</span><span class="visually-hidden"> (price not yet checked)</span>'
                        if row.cloud_scale_unverified else "")
                parts.append(f'<td class="num"><a href="{escape(row.url)}#cloud-scale" '
                             f'title="{escape(row.cloud_scale_note)}">{value}</a>{mark}</td>')
            else:
                parts.append('<td class="num"></td>')
        if power:
            kw = row.avg_power_kw
            parts.append(f'<td class="num">{"" if kw is None else f"{kw:.1f}"}</td>')
        parts.append("</tr>")
        out.append("".join(parts))
    return "\n".join(out)
