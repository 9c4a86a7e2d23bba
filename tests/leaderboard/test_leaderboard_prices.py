"""Cloud scale: the dated price tables as data, the loader, the ratio, and where readers see it."""

import datetime
from decimal import Decimal

import pytest
from django.core.management import call_command

from leaderboard.catalogue import prices
from leaderboard.models import CloudPrice

from .. import leaderboard_factories as make


@pytest.fixture
def v51(rounds):
    prices.load_all()
    return rounds["training-v5.1"]


@pytest.fixture
def v05(rounds):
    prices.load_all()
    return rounds["training-v0.5"]


def test_the_shipped_price_files_say_how_far_each_number_can_be_trusted():
    for path in sorted(prices.PRICES_DIR.glob("*.toml")):
        data = prices.read_price_file(path)
        for line in data["prices"]:
            assert line["status"] in ("sourced", "unverified", "placeholder"), path.name
            if line["status"] == "placeholder":
                assert "price_per_hour" not in line, (
                    f"{path.name}: a placeholder must not carry a price"
                )
            else:
                assert line["source"].startswith("https://") and isinstance(
                    line["as_of"], datetime.date
                )


def test_a_price_file_without_source_for_a_price_is_refused(tmp_path):
    bad = tmp_path / "x.toml"
    bad.write_text(
        'round = "training-v0.5"\n[[prices]]\nreference = true\nprovider = "P"\ninstance = "I"\n'
        'price_per_hour = 1.0\nstatus = "sourced"\n'
    )
    with pytest.raises(ValueError, match="lacks a price, a source or a date"):
        prices.read_price_file(bad)


@pytest.mark.django_db
def test_loading_keeps_what_staff_edited_unless_told_to_replace(v05):
    reference = CloudPrice.objects.get(round=v05, reference=True)
    assert reference.price_per_hour == Decimal("1.46") and reference.status == "unverified"
    reference.price_per_hour = Decimal("1.60")
    reference.status = "sourced"
    reference.save()
    assert prices.load_all()["training-v0.5"] == 0
    reference.refresh_from_db()
    assert reference.price_per_hour == Decimal("1.60")
    call_command("load_rounds", "--replace-prices", stdout=open("/dev/null", "w"))
    reference.refresh_from_db()
    assert reference.price_per_hour == Decimal("1.46")


@pytest.mark.django_db
def test_cloud_scale_is_the_systems_price_over_the_reference_price(v05):
    lines = list(CloudPrice.objects.filter(round=v05))
    scale = prices.cloud_scale(lines, "Google Inc.", "cloud_v2.8", "tpuv2-8")
    assert scale.value == pytest.approx(4.50 / 1.46)
    assert scale.unverified
    assert (
        "Google Cloud Cloud TPU v2-8" in scale.explanation
        and "as of 12 Dec 2018" in scale.explanation
    )
    assert "https://cloud.google.com/tpu/pricing" in scale.explanation
    pod = prices.cloud_scale(lines, "Google Inc.", "x", "tpuv2-512 + tpuv2-8")
    assert pod.value is None and "no price for this system" in pod.explanation
    for text in (scale.explanation, pod.explanation):  # words for readers, not the data's
        assert "placeholder" not in text.lower() and "no date" not in text
    assert "not yet checked" in scale.explanation
    assert prices.cloud_scale(lines, "nvidia", "dgx1", "DGX-1V") is None


@pytest.mark.django_db
def test_a_line_naming_the_key_wins_over_one_naming_the_name(v05):
    CloudPrice.objects.create(
        round=v05,
        submitter="Google Inc.",
        system_key="special",
        provider="G",
        instance="special",
        price_per_hour=Decimal("2.92"),
        status="sourced",
        source="https://example.org/p",
        as_of=datetime.date(2018, 12, 1),
    )
    lines = list(CloudPrice.objects.filter(round=v05))
    assert prices.cloud_scale(lines, "Google Inc.", "special", "tpuv2-8").value == pytest.approx(
        2.0
    )


@pytest.mark.django_db
def test_the_table_shows_cloud_scale_with_its_prices_on_hover_and_the_system_page_details_them(
    client, v05
):
    tpu = make.system(
        v05,
        "Google Inc.",
        "cloud_v2.8",
        name="tpuv2-8",
        category="cloud",
        accelerator_model="tpuv2-8",
    )
    make.result(tpu, "resnet", 301.58)
    html = client.get("/r/training-v0.5/").content.decode()
    assert "Cloud scale</a>" in html
    assert ">3.08</a>" in html and "†" in html
    assert "as of 12 Dec 2018" in html and "https://cloud.google.com/tpu/pricing" in html
    assert 'href="/r/training-v0.5/Google%20Inc./cloud_v2.8/#cloud-scale"' in html
    detail = client.get("/r/training-v0.5/Google%20Inc./cloud_v2.8/").content.decode()
    assert "Cloud scale <strong>3.08</strong>" in detail
    assert "USD 4.50" in detail and "USD 1.46" in detail and "12 Dec 2018" in detail
    assert 'data-label="Checked">not yet</td>' in detail  # checked against its source: not yet


@pytest.mark.django_db
def test_without_a_known_price_the_cloud_scale_is_left_out_with_one_sentence(client, v51):
    # v5.1's price table lists its cloud systems as placeholders, with no reference price.
    nebius = make.system(v51, "Nebius", "nebius_b200_n1", name="Nebius B200 n1", category="cloud")
    make.result(nebius, "retinanet", 20)
    html = client.get("/r/training-v5.1/").content.decode()
    assert "Cloud scale</a>" not in html and 'value="cloud_scale"' not in html
    assert "No cloud scale column: the round's price table has no known price" in html
    detail = client.get("/r/training-v5.1/Nebius/nebius_b200_n1/").content.decode()
    assert "No cloud scale: the round's price table has no reference price yet." in detail
    for page in (html, detail):
        text = page.split("<body", 1)[1].lower()  # what readers see (the head's atom+xml has "n/a")
        assert "placeholder:" not in text and "no date" not in text and "n/a" not in text


@pytest.mark.django_db
def test_editing_a_price_refreshes_the_cached_table(client, v05):
    tpu = make.system(v05, "Google Inc.", "k", name="tpuv2-8", category="cloud")
    make.result(tpu, "resnet", 301.58)
    assert ">3.08</a>" in client.get("/r/training-v0.5/").content.decode()
    line = CloudPrice.objects.get(round=v05, system_name="tpuv2-8")
    line.price_per_hour = Decimal("2.92")
    line.save()  # as the admin does
    assert ">2.00</a>" in client.get("/r/training-v0.5/").content.decode()


@pytest.mark.django_db
def test_staff_edit_prices_in_the_admin(client, v05, cast):
    cast["staff"].is_superuser = True
    cast["staff"].save()
    client.force_login(cast["staff"])
    assert client.get("/admin/leaderboard/cloudprice/").status_code == 200
    line = CloudPrice.objects.get(round=v05, reference=True)
    response = client.get(f"/admin/leaderboard/cloudprice/{line.pk}/change/")
    assert response.status_code == 200 and "price_per_hour" in response.content.decode()


@pytest.mark.django_db
def test_a_result_with_a_dated_price_has_its_cloud_cost_with_date_and_source(client, v05):
    tpu = make.system(v05, "Google Inc.", "tpu", name="tpuv3-8", category="cloud")
    result = make.result(tpu, "resnet", 90)  # 1.5 h at USD 8.00/h
    html = client.get(result.get_absolute_url()).content.decode()
    cost = html.split("data-cloud-cost>")[1].split("</dd>")[0]
    assert cost.startswith("USD 12.00 to train: 1.50 h at USD 8.00/h on demand")
    assert "as of 12 Dec 2018" in cost and "https://cloud.google.com/tpu/pricing" in cost
    assert "not yet checked against its source" in cost
    system = client.get(tpu.get_absolute_url()).content.decode()
    assert "Cloud cost (USD)" in system and ">12.00</a>" in system
    # A placeholder line has no price: no cost, and no column for it.
    pod = make.system(v05, "Google Inc.", "pod", name="tpuv2-512 + tpuv2-8", category="cloud")
    unpriced = make.result(pod, "resnet", 10)
    assert "data-cloud-cost" not in client.get(unpriced.get_absolute_url()).content.decode()
    assert "Cloud cost" not in client.get(pod.get_absolute_url()).content.decode()


@pytest.mark.django_db
def test_a_round_without_prices_says_nothing_of_a_missing_cost_chart(client, v51, v05):
    make.result(make.system(v51, "Acme", "alpha", accelerator_count=8), "retinanet", 10)
    assert "No cost chart" not in client.get("/r/training-v5.1/").content.decode()
    tpu = make.system(v05, "Google Inc.", "tpu", name="tpuv3-8", category="cloud")
    make.result(tpu, "maskrcnn", 90)  # no reference time: no point on the cost chart
    assert "No cost chart" in client.get("/r/training-v0.5/?benchmark=maskrcnn").content.decode()
