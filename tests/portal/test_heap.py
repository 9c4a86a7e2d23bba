"""portal/heap.py: a web process freezes what it holds after its first request, once."""

import gc

import pytest
from django.core.signals import request_finished

from portal import heap

pytestmark = pytest.mark.django_db


def test_the_first_request_freezes_the_heap_and_later_ones_do_not_again(client, rounds):
    gc.unfreeze()
    heap.freeze_after_first_request()
    try:
        assert gc.get_freeze_count() == 0
        assert client.get("/rounds/").status_code == 200
        frozen = gc.get_freeze_count()
        assert frozen > 10_000  # Django and the portal's modules, at least
        assert client.get("/rounds/").status_code == 200
        # Not frozen again (the count only falls, as frozen objects are freed): what requests make is collected.
        assert gc.get_freeze_count() <= frozen
    finally:
        request_finished.disconnect(heap._freeze)
        gc.unfreeze()


def test_the_served_site_asks_for_the_freeze():
    import portal.wsgi  # noqa: F401 (what gunicorn loads; nothing else of the tests imports it)

    assert request_finished.disconnect(heap._freeze)  # it was connected
