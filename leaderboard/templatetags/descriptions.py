"""A system description as submitted, shown as fields: tables as definition lists, lists as lists."""

from django import template
from django.utils.html import format_html, format_html_join
from django.utils.safestring import mark_safe

register = template.Library()

MAX_DEPTH = 6  # deeper parts are named, not shown: the page must render whatever a file holds
MAX_ITEMS = 200  # per table or list


def _empty(value) -> bool:
    return value is None or value == "" or value == [] or value == {}


def _scalar(value) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def _more(count: int):
    return format_html('<li class="muted">… and {} more</li>', count) if count > 0 else ""


def _fields(value, depth: int):
    if isinstance(value, dict) or isinstance(value, list):
        if depth >= MAX_DEPTH:
            return format_html(
                '<span class="muted">(nested deeper than {} levels: see the file)</span>', MAX_DEPTH
            )
    else:
        return _scalar(value)
    if isinstance(value, dict):
        items = [(str(k), v) for k, v in value.items() if not _empty(v)]
        items.sort(key=lambda kv: kv[0].lower())
        rows = format_html_join(
            "", "<dt>{}</dt><dd>{}</dd>", ((k, _fields(v, depth + 1)) for k, v in items[:MAX_ITEMS])
        )
        extra = (
            format_html("<dt>…</dt><dd>{} more fields</dd>", len(items) - MAX_ITEMS)
            if len(items) > MAX_ITEMS
            else ""
        )
        return format_html('<dl class="facts description">{}{}</dl>', rows, extra)
    items = [v for v in value if not _empty(v)]
    tag = "ol" if any(isinstance(v, (dict, list)) for v in items) else "ul"
    rows = format_html_join(
        "", "<li>{}</li>", ((_fields(v, depth + 1),) for v in items[:MAX_ITEMS])
    )
    return format_html(
        '<{0} class="description">{1}{2}</{0}>', mark_safe(tag), rows, _more(len(items) - MAX_ITEMS)
    )


@register.simple_tag
def description_fields(description):
    """{% description_fields system.description %}: nested tables and lists as HTML, every text escaped."""
    if not isinstance(description, (dict, list)) or _empty(description):
        return ""
    return _fields(description, 0)
