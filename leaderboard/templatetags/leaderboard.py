import json

from django import template

from ..catalogue import findings_words, units
from ..pages import charts

register = template.Library()


@register.filter
def get(mapping, key):
    """Look a key up in a dict: {{ row.cells|get:bench.key }}."""
    return mapping.get(key)


@register.filter
def minutes(seconds):
    return units.minutes(seconds)


@register.filter
def kilo(value):
    return None if value is None else value / 1000


@register.filter
def energy(joules):
    return units.energy(joules)


@register.filter
def severity(word):
    """A finding's severity ('error', 'warning', 'info') in the page's language."""
    return findings_words.severity_word(word)


@register.filter
def verdict(word):
    """A validation's verdict ('valid', 'invalid') in the page's language."""
    return findings_words.verdict_word(word)


@register.filter
def translate_phrase(text):
    """A finding's phrase, message or hint in the page's language where the catalogue has it (the rule
    catalogue's phrases, fixed hints); else as the checks wrote it."""
    return findings_words.translated(text)


@register.filter
def is_url(text):
    return isinstance(text, str) and text.startswith(("https://", "http://"))


@register.inclusion_tag("leaderboard/_source.html")
def source(text):
    """A price's source: a link when it is a URL, else the citation as text."""
    return {"text": text, "url": is_url(text)}


@register.inclusion_tag("leaderboard/_chart_table.html")
def chart_table(figure_json, description=""):
    """A chart's numbers as a folded table after it: its alternative for screen readers and for anyone
    who prefers numbers. figure_json is the plotly figure the page embeds."""
    try:
        figure = json.loads(figure_json) if figure_json else None
    except ValueError:
        figure = None
    return {"table": charts.table(figure), "description": description}
