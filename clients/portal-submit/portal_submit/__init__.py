"""portal-submit: upload a training submission bundle to the results portal (see cli.py)."""
