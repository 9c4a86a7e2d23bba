"""The AC and DC twins of MLPerf Power are told apart by their folder or system name, and explained."""

import pytest

from leaderboard.pages.power_twins import explanation, measured_at

from .. import leaderboard_factories as make


def test_a_folder_or_a_system_name_says_where_power_was_measured():
    assert measured_at("smc-ac-power", "SMC-H100") == "AC"
    assert measured_at("smc", "SMC-H100-DC-Power") == "DC"
    assert measured_at("smc", "SMC-H100") == ""
    assert measured_at("Acme", "Vacpower 9000") == ""  # a word that merely holds the letters
    assert "at the wall" in explanation("smc-ac-power") and explanation("Dell") == ""


@pytest.mark.django_db
def test_pages_explain_a_twin_where_it_appears(client, v51):
    ac = make.system(v51, "smc-ac-power", "8xH100", name="SMC-H100-AC-Power", accelerator_count=8)
    dc = make.system(v51, "smc-dc-power", "8xH100", name="SMC-H100-DC-Power", accelerator_count=8)
    plain = make.system(v51, "Acme", "alpha")
    for system, energy in ((ac, 5e6), (dc, 4.6e6)):
        make.result(system, "retinanet", 10, power_result=True, energy_j=energy)
    make.result(plain, "retinanet", 10)
    assert (
        "before the power supplies"
        in client.get(ac.get_absolute_url() + "retinanet/").content.decode()
    )
    assert "after the power supplies" in client.get(dc.get_absolute_url()).content.decode()
    assert "power supplies" not in client.get(plain.get_absolute_url()).content.decode()
    assert (
        "AC-Power and DC-Power: one machine published twice"
        in client.get("/r/training-v5.1/").content.decode()
    )
    page = client.get("/organisations/smc-ac-power/", follow=True).content.decode()
    assert "AC-Power and DC-Power: one machine published twice" in page
