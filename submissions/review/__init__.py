"""Reviewing a round: objections, their answers and decisions, withdrawal (objections.py, models.py), their
pages (views.py, urls.py) and API (api.py), and the staff pages that run a round's calendar."""
