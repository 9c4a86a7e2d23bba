from django import template

from .. import units

register = template.Library()


@register.filter
def get(mapping, key):
    """Look a key up in a dict: {{ row.cells|get:bench.key }}."""
    return mapping.get(key)


@register.filter
def minutes(seconds):
    return units.minutes(seconds)


@register.filter
def is_url(text):
    return isinstance(text, str) and text.startswith(("https://", "http://"))


@register.inclusion_tag("leaderboard/_source.html")
def source(text):
    """A price's source: a link when it is a URL, else the citation as text."""
    return {"text": text, "url": is_url(text)}
