"""Outputs built from bundle text: pages, download names (RFC 6266) and CSV cells, for hostile names."""

import pytest

from . import leaderboard_factories as make

pytestmark = pytest.mark.usefixtures("eager")


def test_names_with_a_slash_or_a_percent_sign_have_pages_of_their_own(client, rounds):
    """A submitter's name is text from a bundle (a system description's field): '/' and '%' are kept apart from
    the path's own; a name without them has the URL it always had."""
    v51 = rounds["training-v5.1"]
    names = ["Dell/EMC", "50%2Foff", "100%", "Acme"]
    results = [make.result(make.system(v51, name, "alpha"), "retinanet", 10, runs=5) for name in names]
    assert results[3].get_absolute_url() == "/r/training-v5.1/Acme/alpha/retinanet/"
    assert client.get("/r/training-v5.1/").status_code == 200  # every row links to its system
    for name, result in zip(names, results):
        page = client.get(result.system.get_absolute_url())
        assert page.status_code == 200 and page.context["system"].submitter.name == name
        assert client.get(result.get_absolute_url()).context["result"].pk == result.pk
    assert client.get("/r/training-v5.1/Dell/EMC/alpha/").status_code == 404  # a '/' is the path's own

