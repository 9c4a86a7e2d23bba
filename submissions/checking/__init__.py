"""Checking a bundle: the pipeline from an accepted upload to scored results.

Owns: the pure domain (bundles/: unpack with limits or read in place, the layout; logs/: the log
parser; rules/: the round's rules as findings; scoring.py, energy.py, systems.py, safejson.py); the
pipeline's steps around it (pipeline/: ingest -> check runs -> finalize -> publication, the sweeper,
retention) and their Celery tasks (tasks.py) with the leases that let the sweeper recover a dead
worker's task (leases.py); what a submission's page reads of it (reports.py: findings; status.py:
progress steps; stored.py: a stored bundle's files for the log viewer).

May import: refchecks (finalize plans the reference checks), the records (models, storage, the
Objection rows publication carries) and the domain; leaderboard, accounts, audit, portal.celery.
Never intake, review or the app's root. The domain imports only itself and leaderboard's pure
tables: no models, no Django database code. See docs/architecture.md.
"""
