"""gc.freeze() once a web process has served its first request. A trick, kept because a target needs it.

Target (issue 28): the round page's cold render, p95 under 300 ms for a 400-system round
(bench/leaderboard.py). A web process holds some 176,000 objects that the cycle collector tracks once
Django, DRF and pandas are loaded (pandas alone 44,000); a cold render of that round makes enough
long-lived objects to set off a full collection every third or fourth render, and a full collection
walks all of them: 130-340 ms of pause on this shared 2-core machine, the slowest renders and so the p95.
gc.freeze() moves what the process holds after its first request (modules, URLs, templates) out of the
collector's walks for good; what requests make is collected as before. Python's documentation suggests
it for pre-forking servers (gc.freeze).

Measured with and without in one run, twice: two gunicorns (2 gthread workers each) on the bench's
catalogue, one with this and one without, cold renders of the 400-system round alternating between them
(bench/leaderboard.py's cold: invalidate, wait out the round memo, one GET), 20 each, load 7 on 2 cores:
  without: p50 290.7 ms, p95 545.9 ms;   again: p50 273.4 ms, p95 533.9 ms
  with:    p50 252.2 ms, p95 309.6 ms;   again: p50 270.4 ms, p95 336.6 ms
Without it the p95 is twice the p50 (the renders with a full collection); with it, 1.2 times. At that
load neither meets 300 ms; the freeze is what brings the p95 within reach of it.

portal/wsgi.py calls freeze_after_first_request(): only the served site, not manage.py or the tests.
"""

import gc

from django.core.signals import request_finished


def _freeze(**kwargs) -> None:
    request_finished.disconnect(_freeze)
    gc.collect()  # the first request's garbage is not kept for good
    gc.freeze()


def freeze_after_first_request() -> None:
    request_finished.connect(_freeze)
