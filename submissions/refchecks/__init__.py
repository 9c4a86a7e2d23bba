"""Reference checks: an agent (agent/, a Celery worker on a GPU host) runs the benchmark's model for a short
timed window on the claimed accelerator type, and the portal compares the measured throughput with the one
the logs imply.

- implied.py: the throughput the logs imply (pure);
- verdict.py: the comparison and its verdict, with the tolerances of benchmarks.toml (pure);
- jobs.py: the checks' life in the database: planned at finalize or by staff, sent to the agents' queue of
  the accelerator's family, stored when an agent answers, retried by the sweeper, failed with the reason.
- models.py (Agent, ReferenceCheck, in the submissions app), api.py and views.py (staff request a check and
  read them), tasks.py (what an agent sends back, by name).

May import: the records and the domain (implied.py and verdict.py are the domain: pure); leaderboard, audit,
portal.celery. Never intake, checking's pipeline, review or the app's root. See docs/architecture.md.
"""
