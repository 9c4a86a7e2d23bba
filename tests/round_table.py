"""The round table as the tests build and read it: five systems to fill a round with (five_systems), a
page's HTML (page), its table's rows (table_rows), the systems' keys in order (names) and a chart's
plotly figure (figure)."""

import json
import re

from . import leaderboard_factories as make


def page(client, url):
    response = client.get(url)
    assert response.status_code == 200, response.content[:500]
    return response.content.decode()


def table_rows(html):
    """[(system name, [cell texts])] of every row in the page's tables, in order."""
    rows = []
    for tr in re.findall(r'<tr data-system="[^"]*"[^>]*>(.*?)</tr>', html, re.S):
        name = re.search(
            r'<th scope="row" class="sys">.*?<a [^>]*data-name[^>]*>(.*?)</a>', tr
        ).group(1)
        cells = [
            re.sub(r"<[^>]+>", "", c).strip()
            for c in re.findall(r'<td class="num">(.*?)</td>', tr, re.S)
        ]
        rows.append((name, cells))
    return rows


def five_systems(v51):
    """Five systems of three submitters (Acme, Beta, Gamma) in the round, across divisions, categories,
    accelerators and frameworks, with their results: what the filters and sorting of the table are
    tried on. Returns the round."""
    rows = [
        (
            "Acme",
            "a1",
            "closed",
            "onprem",
            "NVIDIA H100-SXM5-80GB",
            8,
            "PyTorch 25.09",
            {"retinanet": 10, "rgat": 5},
        ),
        (
            "Acme",
            "a2",
            "closed",
            "cloud",
            "NVIDIA H100-SXM5-80GB",
            64,
            "PyTorch 25.09",
            {"retinanet": 2},
        ),
        (
            "Beta",
            "b1",
            "closed",
            "onprem",
            "AMD Instinct MI355X",
            8,
            "JAX 0.5",
            {"retinanet": 12, "flux1": 30},
        ),
        ("Beta", "b2", "open", "research", "AMD Instinct MI355X", 512, "JAX 0.5", {"rgat": 1}),
        (
            "Gamma",
            "g1",
            "closed",
            "preview",
            "NVIDIA GB200",
            72,
            "NeMo 25.04",
            {"retinanet": 3, "rgat": 2},
        ),
    ]
    for submitter, key, division, category, acc, count, fw, results in rows:
        s = make.system(
            v51,
            submitter,
            key,
            division=division,
            category=category,
            accelerator_model=acc,
            accelerator_count=count,
            framework=fw,
            processor_model="AMD EPYC 9575F"
            if submitter == "Beta"
            else "Intel Xeon Platinum 8480C",
        )
        for bench, minutes in results.items():
            make.result(s, bench, minutes)
    return v51


def names(html):
    return [key for key in re.findall(r'<tr data-system="[^/"]*/([^"]*)"', html)]


def figure(html, chart_id):
    """The plotly figure (data, layout) of the page's chart with this id; fails when the page has none."""
    match = re.search(
        rf'<script type="application/json" data-chart="{chart_id}">(.*?)</script>', html, re.S
    )
    assert match, f"no {chart_id} on the page"
    return json.loads(match.group(1))
