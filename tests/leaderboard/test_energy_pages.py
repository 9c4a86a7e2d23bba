"""Energy on the pages: the time/energy front, a power result's page (energy per run, each node's power
plot), and results published side by side at one address (smc, smc-ac-power, smc-dc-power)."""

import re

import pytest

from leaderboard.models import Run
from leaderboard.pages import charts

from .. import leaderboard_factories as make
from ..round_table import figure


def test_the_front_holds_what_nothing_beats_on_both_time_and_energy():
    points = [(10, 100), (20, 50), (15, 120), (30, 50), (5, 400), (10, 100)]
    # (15, 120) is beaten by (10, 100); (30, 50) by (20, 50); the two (10, 100) tie and both stay.
    assert charts.front(points) == {0, 1, 4, 5}


@pytest.mark.django_db
def test_time_and_energy_chart_on_the_round_page(client, v51):
    fast = make.system(v51, "Acme", "fast")
    make.result(fast, "retinanet", 10, energy_j=9e6, power_result=True)
    frugal = make.system(v51, "Acme", "frugal")
    make.result(frugal, "retinanet", 20, energy_j=5e6, power_result=True)
    worse = make.system(v51, "Beta", "worse")
    make.result(worse, "retinanet", 25, energy_j=7e6, power_result=True)
    html = client.get("/r/training-v5.1/").content.decode()
    fig = figure(html, "chart-energy")
    on, behind = fig["data"]
    assert on["name"] == "On the front" and on["x"] == [10, 20] and on["y"] == [9000, 5000]
    assert behind["x"] == [25] and "worse" in behind["text"][0]
    assert "Power results only" in html


@pytest.mark.django_db
def test_a_power_result_page_shows_energy_per_run_and_each_nodes_power(client, v51):
    system = make.system(v51, "Acme", "alpha", accelerator_count=8)
    result = make.result(
        system, "retinanet", 10, runs=3, power_result=True, energy_j=6e6, public_id="5.1-0001"
    )
    trace = {
        "run_s": 600.0,
        "nodes": {
            "node_0": {"s": [-30, 300], "w": [900, 5000]},
            "node_1": [[-29, 950], [310, 5100]],  # as runs checked before 2026-11-28 keep it
        },
    }
    Run.objects.filter(result=result).update(energy_j=6e6, power_trace=trace)
    html = client.get(result.get_absolute_url()).content.decode()
    assert "6,000.0 kJ · 750.0 kJ per accelerator" in html
    assert html.count("6,000.0</td>") == 3  # each run's energy, in kJ
    fig = figure(html, "chart-power")
    assert [t["name"] for t in fig["data"]] == ["node 0", "node 1"]
    assert [s["x0"] for s in fig["layout"]["shapes"]] == [0, 600.0]
    assert [a["text"] for a in fig["layout"]["annotations"]] == ["run_start", "run_stop"]
    assert client.get(result.get_absolute_url() + "?power_run=2").status_code == 200


@pytest.mark.django_db
def test_results_published_side_by_side_have_an_address_each(client, v51):
    timed = make.system(v51, "SMC", "8xH100", name="SMC-H100")
    ac = make.system(v51, "SMC", "8xH100", name="SMC-H100-AC-Power")
    make.result(timed, "retinanet", 10, public_id="5.1-0001")
    make.result(ac, "retinanet", 10, public_id="5.1-0002", power_result=True, energy_j=4e6)
    html = client.get("/r/training-v5.1/").content.decode()
    assert f"/r/training-v5.1/SMC/8xH100/retinanet/?system={ac.uid}" in html
    assert f"/r/training-v5.1/SMC/8xH100/retinanet/?system={timed.uid}" in html
    page = client.get(f"/r/training-v5.1/SMC/8xH100/retinanet/?system={ac.uid}").content.decode()
    assert "SMC-H100-AC-Power" in page and "4,000.0 kJ" in page
    page = client.get(f"/r/training-v5.1/SMC/8xH100/retinanet/?system={timed.uid}").content.decode()
    assert "AC-Power" not in page
    assert client.get("/id/5.1-0002")["Location"].endswith(f"?system={ac.uid}")


@pytest.mark.django_db
def test_the_system_page_gives_energy_in_kj(client, v51):
    system = make.system(v51, "Acme", "alpha")
    make.result(system, "retinanet", 10, power_result=True, energy_j=6.5e6)
    html = client.get(system.get_absolute_url()).content.decode()
    assert "Energy (kJ)" in html and 'data-label="Energy (kJ)">6,500</td>' in html


@pytest.mark.django_db
def test_api_v1_gives_a_results_and_its_runs_energy(client, v51):
    from django.urls import reverse

    system = make.system(v51, "Acme", "alpha", accelerator_count=8)
    result = make.result(
        system, "retinanet", 10, runs=3, power_result=True, energy_j=6e6, public_id="5.1-0001"
    )
    Run.objects.filter(result=result, index=1).update(energy_j=5.5e6)
    body = client.get(reverse("v1:result-detail", args=["5.1-0001"])).json()
    assert body["power_result"] is True and body["energy_kj"] == 6000.0
    assert body["energy_per_accelerator_kj"] == 750.0 and body["energy_message"] == ""
    assert [run["energy_kj"] for run in body["runs"]] == [None, 5500.0, None]


@pytest.mark.django_db
def test_api_v1_links_results_published_side_by_side_to_their_own_pages(client, v51):
    timed = make.system(v51, "SMC", "8xH100", name="SMC-H100")
    ac = make.system(v51, "SMC", "8xH100", name="SMC-H100-AC-Power")
    make.result(timed, "retinanet", 10, public_id="5.1-0001")
    make.result(ac, "retinanet", 10, public_id="5.1-0002", power_result=True, energy_j=4e6)
    make.result(make.system(v51, "Acme", "alone"), "retinanet", 9, public_id="5.1-0003")
    urls = {r["public_id"]: r["url"] for r in client.get("/api/v1/results/").json()["results"]}
    assert urls["5.1-0001"].endswith(f"/SMC/8xH100/retinanet/?system={timed.uid}")
    assert urls["5.1-0002"].endswith(f"?system={ac.uid}")
    assert urls["5.1-0003"].endswith("/Acme/alone/retinanet/")  # an address of its own: as it was
    one = client.get("/api/v1/results/5.1-0002/").json()
    assert one["url"].endswith(f"?system={ac.uid}")


@pytest.mark.django_db
def test_the_api_systems_and_compare_tell_the_ac_and_dc_folders_apart(client, v51):
    """v4.0's smc-ac-power and smc-dc-power publish the same system folders under one submitter name. The
    API's system `url` led to one page for both (the newest), that page's results to the newest's, and
    compare's s=<submitter>/<key> picked one of them: the two could not be compared."""
    ac = make.system(v51, "SMC", "8xH100", name="SMC-H100-AC-Power")
    dc = make.system(v51, "SMC", "8xH100", name="SMC-H100-DC-Power")
    make.result(ac, "retinanet", 10, public_id="5.1-0001", power_result=True, energy_j=4e6)
    make.result(dc, "retinanet", 10, public_id="5.1-0002", power_result=True, energy_j=3e6)
    alone = make.system(v51, "Acme", "alone")
    make.result(alone, "retinanet", 9, public_id="5.1-0003")
    listed = client.get("/api/v1/systems/").json()["results"]
    urls = {s["uid"]: s["url"] for s in listed}
    assert urls[str(alone.uid)].endswith("/Acme/alone/")  # an address of its own: as it was
    for system, other in ((ac, dc), (dc, ac)):
        assert urls[str(system.uid)].endswith(f"/SMC/8xH100/?system={system.uid}")
        one = client.get(f"/api/v1/systems/{system.uid}/").json()
        assert one["url"] == urls[str(system.uid)]
        page = client.get(one["url"].split("testserver", 1)[1]).content.decode()
        assert system.name in page and other.name not in page
        assert f"/SMC/8xH100/retinanet/?system={system.uid}" in page  # its result, not the other's
    html = client.get("/r/training-v5.1/").content.decode()
    slugs = re.findall(r'name="s" value="([^"]+)"', html)
    assert len(slugs) == len(set(slugs)) == 3
    smc = [s for s in slugs if s.startswith("SMC/")]
    compared = client.get("/r/training-v5.1/compare/", {"s": smc}).content.decode()
    assert "SMC: SMC-H100-AC-Power" in compared and "SMC: SMC-H100-DC-Power" in compared
    assert "Pick at least two systems" not in compared


@pytest.mark.django_db
def test_a_result_page_gives_energy_in_the_tables_unit_however_large(client, v51):
    system = make.system(v51, "Acme", "alpha", accelerator_count=8)
    result = make.result(system, "retinanet", 10, runs=3, power_result=True, energy_j=45e6)
    Run.objects.filter(result=result).update(energy_j=45e6)
    html = client.get(result.get_absolute_url()).content.decode()
    assert "45,000.0 kJ · 5,625.0 kJ per accelerator" in html and "MJ" not in html
