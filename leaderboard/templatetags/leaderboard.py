from django import template

register = template.Library()


@register.filter
def get(mapping, key):
    """Look a key up in a dict: {{ row.cells|get:bench.key }}."""
    return mapping.get(key)


@register.filter
def minutes(seconds):
    return None if seconds is None else seconds / 60
