"""Reviewing a round: objections, their answers and decisions, withdrawal, and publication's timing.

Owns: the Objection and ObjectionReply rows (models.py, in the submissions app: no migration moved
them); filing, answering and deciding objections (objections.py); withdrawing a result or a
submission (withdrawals.py); review's pages (views.py, urls.py) and API (api.py); the staff pages of a round's calendar (staff_views.py); publishing the
rounds whose time has come (tasks.py). What a decision does to the results is publication's
(checking/pipeline/publication.py), which reads the decisions here.

May import: checking (publication, withdrawal of rows), refchecks, the records and the domain;
leaderboard, accounts, audit, portal.celery. Never intake or the app's root. See
docs/architecture.md.
"""
