"""The home page: each round with its counts, the latest round's fastest result per benchmark, and a
search across rounds whose hits link to the systems' rows in the round tables."""

import re

import pytest

from .. import leaderboard_factories as make

pytestmark = pytest.mark.django_db


@pytest.fixture
def catalogue(rounds):
    v51, v05 = rounds["training-v5.1"], rounds["training-v0.5"]
    fast = make.system(
        v51,
        "NVIDIA",
        "tyche_72",
        name="Tyche (1x NVIDIA GB200 NVL72)",
        accelerator_model="NVIDIA Blackwell GPU (GB200)",
        accelerator_count=72,
    )
    slow = make.system(
        v51, "Dell", "xe9680", name="XE9680", accelerator_model="NVIDIA H200-SXM5-141GB"
    )
    make.result(fast, "retinanet", 10)
    make.result(slow, "retinanet", 30)
    make.result(slow, "rgat", 5)
    opened = make.system(v51, "Acme", "open_one", division="open")
    make.result(opened, "retinanet", 1)  # open division: not comparable, not the fastest
    make.result(make.system(v51, "Hidden", "h"), "retinanet", 0.5, published=False)
    make.result(
        make.system(v05, "Google", "tpu", name="tpuv2-8", accelerator_model="tpuv2-8"),
        "resnet",
        300,
    )
    return rounds


def test_each_round_is_listed_with_its_public_counts(client, catalogue):
    html = client.get("/").content.decode()
    rows = re.findall(
        r'<tr><th scope="row"><a href="/r/([^/]+)/">[^\n]*</th>\s*<td class="wide-only">[^<]*</td>'
        r'<td class="num">(\d+)</td><td class="num">(\d+)</td><td class="num">(\d+)</td>',
        html,
        re.S,
    )
    counts = {key: tuple(map(int, c)) for key, *c in rows}
    # Submitters, systems, results: the unpublished one left out.
    assert counts["training-v5.1"] == (3, 3, 4)
    assert counts["training-v0.5"] == (1, 1, 1)
    # A round without results says "Not imported here" (test_round_import_pages.py).
    assert "training-v0.6" not in counts
    assert [k for k, *_ in rows][0] == "training-v5.1"  # newest first


def test_the_latest_rounds_fastest_closed_result_per_benchmark(client, catalogue):
    html = client.get("/").content.decode()
    assert "Fastest in Training v5.1" in html
    fastest = re.findall(
        r'<small class="muted">(\w+)</small></th>\s*<td class="num"[^>]*><a href="([^"]+)">([\d.,]+)</a>',
        html,
    )
    assert fastest == [
        ("rgat", "/r/training-v5.1/Dell/xe9680/rgat/", "5.00"),
        ("retinanet", "/r/training-v5.1/NVIDIA/tyche_72/retinanet/", "10.00"),
    ]
    assert 'href="/r/training-v5.1/#row-NVIDIA--tyche_72"' in html
    # Its accelerators, on a phone too (the column was hidden there): a card's cell under its name.
    assert '<th scope="col">Accelerators</th>' in html
    assert '<td data-label="Accelerators">72 × NVIDIA Blackwell GPU (GB200)</td>' in html


def test_a_search_across_rounds_links_each_hit_to_its_row(client, catalogue):
    html = client.get("/?q=gb200 nvidia").content.decode()
    hits = re.findall(r'<li><a href="([^"]+)">([^<]+)</a>', html)
    assert hits == [
        ("/r/training-v5.1/#row-NVIDIA--tyche_72", "NVIDIA: Tyche (1x NVIDIA GB200 NVL72)")
    ]
    # The anchor is the row's id in the round page.
    assert 'id="row-NVIDIA--tyche_72"' in client.get("/r/training-v5.1/").content.decode()
    across = re.findall(r'<li><a href="/r/([^/]+)/#', client.get("/?q=t").content.decode())
    assert set(across) == {"training-v5.1", "training-v0.5"}
    assert "No published system matches" in client.get("/?q=hidden").content.decode()


def test_the_home_page_takes_any_query_without_failing(client, catalogue):
    for q in ["", "%", "'; drop table x", "x" * 500, "a b c d e f g h i j"]:
        assert client.get("/", {"q": q}).status_code == 200


def test_a_search_hit_shows_its_best_placed_result(client, catalogue):
    # Dell's XE9680: 2nd of 2 closed results on RetinaNet (the open one is not compared), the only
    # R-GAT result: its best place is R-GAT's.
    html = client.get("/?q=xe9680").content.decode()
    assert "Best: fastest of 1 on Graph neural network (R-GAT), 5.00 min" in html
    html = client.get("/?q=tyche").content.decode()
    assert "Best: fastest of 2 on Object detection (RetinaNet), 10.00 min" in html


def test_the_menu_opens_the_rounds_the_api_docs_and_has_a_favicon(client, catalogue):
    html = client.get("/").content.decode()
    assert '<a href="/rounds/">Rounds</a>' in html and '<a href="/api/docs/">API</a>' in html
    assert re.search(r'<link rel="icon" href="/static/favicon(\.[0-9a-f]+)?\.svg"', html)
    rounds = client.get("/rounds/").content.decode()
    assert re.findall(r'<th scope="row"><a href="/r/([^/]+)/">', rounds)[:1] == ["training-v5.1"]
    docs = client.get("/api/docs/").content.decode()
    assert 'class="site"' in docs and re.search(
        r'<script src="/static/js/api_docs(\.[0-9a-f]+)?\.js"', docs
    )


def test_favicon_ico_answers_with_the_sites_icon(client):
    """Browsers ask for /favicon.ico where a page names no icon (an API answer, a raw log): it answered 404,
    an error in the console."""
    response = client.get("/favicon.ico")
    assert response.status_code == 302
    assert re.fullmatch(r"/static/favicon(\.[0-9a-f]+)?\.svg", response["Location"])
    assert "max-age=86400" in response["Cache-Control"]
    assert client.post("/favicon.ico").status_code == 405


def test_the_api_docs_load_redocs_bundle_without_its_makers_logo(client):
    """Redoc drew its makers' logo from their site, which the page's policy refused (an error in the console):
    the page loads the site's copy of the bundle, whose logo is an empty image of its own (portal/api/redoc.py)."""
    docs = client.get("/api/docs/").content.decode()
    assert '<script src="/api/docs/redoc.standalone.js"></script>' in docs
    assert "drf_spectacular_sidecar" not in docs
    bundle = client.get("/api/docs/redoc.standalone.js")
    assert bundle.status_code == 200 and bundle["Content-Type"].startswith("text/javascript")
    body = bundle.content
    assert len(body) > 500_000 and b"Redoc" in body  # the whole bundle
    assert b"cdn.redoc.ly" not in body and b"data:image/svg+xml,%3Csvg" in body
    again = client.get("/api/docs/redoc.standalone.js", HTTP_IF_NONE_MATCH=bundle["ETag"])
    assert again.status_code == 304
