"""An organisation's page across rounds under all its names, and progress between two rounds at equal scale."""

import re

import pytest

from leaderboard.models import Run

from .. import leaderboard_factories as make

pytestmark = pytest.mark.django_db


@pytest.fixture
def bert(rounds):
    """BERT in v1.0 and v4.0: NVIDIA at 8 and 64 accelerators, then 8 and 3,472; Dell at 8 in both;
    Sustainable Metal Cloud under its three v4.0 folders; one v1.0 NVIDIA result with too few logs."""
    v10, v40 = rounds["training-v1.0"], rounds["training-v4.0"]
    nv10a = make.system(
        v10, "NVIDIA", "dgxa100", name="DGX A100", accelerator_count=8, accelerator_model="A100"
    )
    nv10b = make.system(
        v10,
        "NVIDIA",
        "dgxa100_n8",
        name="8 x DGX A100",
        accelerator_count=64,
        accelerator_model="A100",
    )
    nv10c = make.system(
        v10,
        "NVIDIA",
        "dgxa100_n128",
        name="128 x DGX A100",
        accelerator_count=1024,
        accelerator_model="A100",
    )
    nv40a = make.system(
        v40, "NVIDIA", "dgxh100", name="DGX H100", accelerator_count=8, accelerator_model="H100"
    )
    nv40b = make.system(
        v40, "NVIDIA", "eos", name="Eos", accelerator_count=3472, accelerator_model="H100"
    )
    dell10 = make.system(
        v10, "Dell", "xe8545", name="XE8545", accelerator_count=8, accelerator_model="A100"
    )
    dell40 = make.system(
        v40, "Dell", "xe9680", name="XE9680", accelerator_count=8, accelerator_model="H100"
    )
    ac = make.system(
        v40,
        "smc-ac-power",
        "1xSMC",
        name="SMC H100 AC",
        accelerator_count=8,
        published_submitter="Sustainable Metal Cloud",
    )
    dc = make.system(
        v40,
        "smc-dc-power",
        "1xSMC",
        name="SMC H100 DC",
        accelerator_count=8,
        published_submitter="Sustainable Metal Cloud",
    )
    make.result(nv10a, "bert", 20.0)
    make.result(nv10b, "bert", 4.0)
    short = make.result(
        nv10c, "bert", None, score_message="3 of the 10 required runs were submitted."
    )
    for i in range(3):
        Run.objects.create(result=short, index=i, path=f"{short.path}/result_{i}.txt")
    make.result(nv40a, "bert", 10.0)  # 2× at 8
    make.result(nv40b, "bert", 0.1)
    make.result(dell10, "bert", 30.0)
    make.result(dell40, "bert", 12.0)  # 2.5× at 8
    make.result(ac, "bert", 6.0)
    make.result(dc, "bert", 6.5)
    return rounds


def test_an_organisation_page_lists_every_result_under_every_name(client, bert):
    html = client.get("/organisations/Sustainable%20Metal%20Cloud/").content.decode()
    assert "smc-ac-power" in html and "smc-dc-power" in html
    assert "SMC H100 AC" in html and "SMC H100 DC" in html
    # Its best BERT in v4.0 is the AC folder's 6 minutes.
    best = re.search(
        r'<tr data-bench="bert" data-round="training-v4.0">(.*?)</tr>', html, re.S
    ).group(1)
    assert ">6.00<" in best and "8 × " in best
    # Any of its names finds it.
    response = client.get("/organisations/smc-dc-power/")
    assert (
        response.status_code == 302
        and response["Location"] == "/organisations/Sustainable%20Metal%20Cloud/"
    )
    assert client.get("/organisations/nvidia/")["Location"] == "/organisations/NVIDIA/"
    assert client.get("/organisations/Nobody/").status_code == 404


def test_an_organisation_page_says_where_a_rounds_logs_are_missing_from_the_public_copy(
    client, bert
):
    html = client.get("/organisations/NVIDIA/").content.decode()
    note = re.search(r"<p class=\"notice\" data-missing-logs>(.*?)</p>", html, re.S).group(1)
    assert "missing from the public copy" in note and "128 x DGX A100 (3 of 10 logs)" in note
    assert html.count("data-missing-logs") == 1  # v1.0 only
    assert "not scored: 3 of the 10 required runs were submitted." in html


def test_between_two_rounds_compares_matched_accelerator_counts_and_sorts_by_gain(client, bert):
    url = "/progress/?benchmark=bert&from=training-v1.0&to=training-v4.0"
    html = client.get(url).content.decode()
    matched = html.split('id="matched"')[1].split("</table>")[0]
    rows = re.findall(r'data-organisation="([^"]+)" data-accelerators="(\d+)"', matched)
    assert rows == [("Dell", "8"), ("NVIDIA", "8")]  # 3,472 and 64 have no match: never compared
    html = client.get(url + "&sort=gain").content.decode()
    matched = html.split('id="matched"')[1].split("</table>")[0]
    rows = re.findall(r'data-organisation="([^"]+)" data-accelerators="(\d+)"', matched)
    gains = re.findall(r'data-gain="([\d.]+)">([\d.]+)×', matched)
    assert rows == [("Dell", "8"), ("NVIDIA", "8")] and [g for _, g in gains] == ["2.50", "2.00"]
    per_acc = html.split('id="per-accelerator"')[1].split("</table>")[0]
    assert re.findall(r'<tr data-organisation="([^"]+)"', per_acc) == ["Dell", "NVIDIA"]
    # Defaults: the last two rounds that ran the benchmark.
    assert (
        'value="training-v1.0" selected' in client.get("/progress/?benchmark=bert").content.decode()
    )


def test_progress_gain_is_per_accelerator_not_a_small_system_against_a_large_one(client, bert):
    html = client.get("/progress/?organisation=NVIDIA").content.decode()
    row = re.search(
        r'title="Key: bert">[^<]*</th><td[^>]*><a href="/r/training-v4.0/">.*?</tr>', html, re.S
    ).group(0)
    # Fastest in v4.0 is Eos (3,472 × 0.1 min); the gain is 8 × 20 min ÷ 8 × 10 min, per accelerator.
    assert ">0.10<" in row and ">3472<" in row and "2.00×" in row
    assert 'href="/organisations/NVIDIA/"' in row


def test_system_and_result_pages_link_their_organisation(client, bert):
    from leaderboard.models import System

    ac = System.objects.get(submitter__name="smc-ac-power")
    link = '<a href="/organisations/Sustainable%20Metal%20Cloud/" data-organisation>'
    assert link in client.get(ac.get_absolute_url()).content.decode()
    assert link in client.get(ac.get_absolute_url() + "bert/").content.decode()
