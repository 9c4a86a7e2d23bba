"""Checking a bundle: unpacking it (bundles/), parsing its logs (logs/), the round's rules (rules/),
scoring, system descriptions, and the pipeline's steps (pipeline/) that the Celery tasks call, with the
leases that let the sweeper recover a dead worker's task; a submission's report and progress steps."""
