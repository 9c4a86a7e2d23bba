"""Organisations across rounds: the alias list, the names of the shared rounds, and the pages that group by it.

Filters, progress, compare and the API treat an organisation's names as one ("Nvidia" in
v0.5 is "NVIDIA" later); result and system pages keep the name as submitted.
"""

import io
import json
import re
import tarfile

import pytest
from django.core.management import call_command

from leaderboard.catalogue import organisations, rounds
from leaderboard.catalogue.organisations import lookalike_key, name_key, organisation_of, parse
from leaderboard.models import Round, Submitter

from .. import leaderboard_factories as make
from ..conftest import shared_plain_tar

# --- the lookup, pure ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "names, organisation",
    [
        (["Google", "Google Inc.", "google", "GOOGLE INC"], "Google"),
        (["NVIDIA", "Nvidia", "nvidia"], "NVIDIA"),
        (["Intel", "intel", "Intel Corp.", "Intel_Corp", "intel corp"], "Intel"),
        (
            ["University-of-Florida", "University of Florida", "university_of_florida"],
            "University of Florida",
        ),
        (["Quanta_Cloud_Technology", "Quanta Cloud Technology"], "Quanta Cloud Technology"),
        (["MangoBoost", "Supermicro_MangoBoost"], "MangoBoost"),
        (["Supermicro", "SuperMicro"], "Supermicro"),
    ],
)
def test_the_names_of_one_organisation_resolve_to_it(names, organisation):
    assert {organisation_of(n) for n in names} == {organisation}


def test_a_name_listed_nowhere_is_its_own_organisation():
    assert organisation_of("Acme Labs") == "Acme Labs"
    assert organisation_of("  Acme   Labs ") == "Acme Labs"
    assert not organisations.shipped().knows("Acme Labs")
    assert (
        organisation_of("NVIDIA Research") == "NVIDIA Research"
    )  # no prefix matching: only listed names


def test_distinct_organisations_stay_apart():
    assert (
        len(
            {
                organisation_of(n)
                for n in ("NVIDIA", "Supermicro", "MangoBoost", "Google", "Intel", "AMD")
            }
        )
        == 6
    )


def test_names_match_ignoring_case_spaces_and_punctuation():
    assert name_key("Intel_Corp") == name_key("intel corp.") == "intelcorp"
    assert name_key("University-of-Florida") == name_key("University of Florida")
    assert name_key("ＮＶＩＤＩＡ") == name_key("nvidia")  # full-width letters are the same letters


@pytest.mark.parametrize(
    "name, other",
    [
        (
            "Beta Or\u0261",
            "Beta Org",
        ),  # LATIN SMALL LETTER SCRIPT G: UTS #39's skeleton reads it as "g"
        ("B\u1eb9ta Org", "Beta Org"),  # e with a dot below: read without its accent
        ("\u0274\u1d20\u026a\u1d05\u026a\u1d00", "NVIDIA"),  # small capitals: read as their letters
        ("\u0412eta 0rg", "Beta Org"),  # Cyrillic "\u0412" and a zero
        ("Micro\u0455oft", "Microsoft"),  # Cyrillic "\u0455"
    ],
)
def test_names_a_reader_takes_for_each_other_have_one_key(name, other):
    assert lookalike_key(name) == lookalike_key(other)


def test_names_a_reader_tells_apart_keep_their_keys():
    names = ("Beta Org", "Zeta Org", "Beta Orb", "Betamax", "NVIDIA", "Nvidea", "Acme", "Acne")
    assert len({lookalike_key(n) for n in names}) == len(names)


def test_every_organisation_of_the_file_is_its_own_name():
    shipped = organisations.shipped()
    assert all(shipped.of(name) == name for name in shipped.names)


@pytest.mark.parametrize(
    "table, message",
    [
        ({"A": ["X"], "B": ["x."]}, "'x.' is listed under both 'A' and 'B'"),
        ({"A": "X"}, "'A' must list its names as strings"),
        ({"A": ["--"]}, "has no letters or digits"),
        ({" ": ["X"]}, "an organisation without a name"),
    ],
)
def test_a_bad_alias_list_is_refused_with_the_reason(table, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        parse({"organisations": table})
    with pytest.raises(ValueError, match="no \\[organisations\\] table"):
        parse({})


# --- every name the shared rounds hold --------------------------------------------------

SUBMITTER_KEY = re.compile(
    r"""["']?su[b]?mitter["']?\s*:\s*["']([^"']+)["']"""
)  # v0.6 Intel writes "sumitter"


def names_in(tarball: str) -> set[str]:
    """The submitter names written in a round archive: its submitters' folders, v0.5's submission.json
    "org", and the "submitter" of the system descriptions."""
    names = set()
    with tarfile.open(shared_plain_tar(tarball), "r:") as archive:
        for member in archive:
            parts = [p for p in member.name.split("/") if p not in ("", ".")]
            if parts and parts[0] == "v0.5.0":
                parts = parts[1:]
            if not parts:
                continue
            if member.isdir() and len(parts) == 1:
                names.add(parts[0])
            elif member.isfile() and parts[-1] == "submission.json":
                names.add(json.load(archive.extractfile(member))["org"])
            elif (
                member.isfile()
                and len(parts) == 3
                and parts[1] == "systems"
                and parts[2].endswith(".json")
            ):
                text = archive.extractfile(member).read().decode("utf-8", "replace")
                names.update(m.group(1) for m in SUBMITTER_KEY.finditer(text))
    return names


@pytest.fixture(scope="module")
def round_names():
    return {
        key: names_in(f"training_{key.removeprefix('training-')}_results.tar.xz")
        for key in ("training-v0.5", "training-v0.6", "training-v5.1")
    }


@pytest.mark.shared_rounds
def test_every_submitter_name_of_the_shared_rounds_is_listed(round_names):
    shipped = organisations.shipped()
    seen = set().union(*round_names.values())
    assert {
        "google",
        "Google Inc.",
        "Google",
        "Nvidia",
        "nvidia",
        "NVIDIA",
        "Intel Corp.",
        "Intel_Corp",
        "Supermicro_MangoBoost",
        "University-of-Florida",
    } <= seen
    assert sorted(n for n in seen if not shipped.knows(n)) == []
    assert len(round_names["training-v5.1"]) >= 19


@pytest.mark.shared_rounds
def test_the_shared_rounds_names_group_into_their_organisations(round_names):
    grouped: dict[str, set[str]] = {}
    for name in set().union(*round_names.values()):
        grouped.setdefault(organisation_of(name), set()).add(name)
    assert grouped["Google"] == {"google", "Google Inc.", "Google"}
    assert grouped["NVIDIA"] == {"nvidia", "Nvidia", "NVIDIA"}
    assert grouped["Intel"] == {"intel", "Intel Corp.", "Intel", "Intel_Corp"}
    assert grouped["MangoBoost"] == {"MangoBoost", "Supermicro_MangoBoost"}
    assert len(grouped) == 23
    by_round = {key: {organisation_of(n) for n in names} for key, names in round_names.items()}
    assert by_round["training-v0.5"] == {"Google", "Intel", "NVIDIA"}
    assert by_round["training-v0.6"] == {"Alibaba", "Fujitsu", "Google", "Intel", "NVIDIA"}
    assert by_round["training-v0.5"] & by_round["training-v0.6"] & by_round["training-v5.1"] == {
        "NVIDIA"
    }


# --- the pages and the API ------------------------------------------------------------------


@pytest.fixture
def history(rounds):
    """NVIDIA as "Nvidia" in v0.5 and "NVIDIA" in v5.1; Google as "Google Inc." and "Google" in v0.5."""
    v05, v51 = rounds["training-v0.5"], rounds["training-v5.1"]
    systems = {
        "nv05": make.system(v05, "Nvidia", "dgx1", name="DGX-1"),
        "g05": make.system(v05, "Google Inc.", "tpu", name="TPU v3"),
        "g05b": make.system(v05, "Google", "v100", name="8 x V100"),
        "nv51": make.system(v51, "NVIDIA", "gb200", name="GB200"),
        "amd51": make.system(v51, "AMD", "mi355", name="MI355X"),
    }
    make.result(systems["nv05"], "resnet", 100)
    make.result(systems["g05"], "resnet", 50)
    make.result(systems["g05b"], "resnet", 300)
    make.result(systems["nv51"], "retinanet", 10)
    make.result(systems["amd51"], "retinanet", 5)
    return systems


def table_rows(client, round_key, query):
    response = client.get(f"/r/{round_key}/?{query}&format=json")
    assert response.status_code == 200
    records = json.loads(response.content)
    return {(r["Organization"], r["System URL"].rstrip("/").rsplit("/", 1)[-1]) for r in records}


@pytest.mark.django_db
def test_submitters_are_filed_under_their_organisation(history):
    assert dict(Submitter.objects.values_list("name", "organisation")) == {
        "Nvidia": "NVIDIA",
        "NVIDIA": "NVIDIA",
        "Google Inc.": "Google",
        "Google": "Google",
        "AMD": "AMD",
    }


@pytest.mark.django_db
def test_the_round_table_filters_one_organisation_under_all_its_names(client, history):
    for name in ("Google", "google", "Google Inc.", "GOOGLE INC"):
        assert table_rows(client, "training-v0.5", f"submitter={name}") == {
            ("Google Inc.", "tpu"),
            ("Google", "v100"),
        }
    assert table_rows(client, "training-v0.5", "submitter=NVIDIA") == {("Nvidia", "dgx1")}
    assert table_rows(client, "training-v0.5", "submitter=NVIDIA&submitter=Google") == {
        ("Nvidia", "dgx1"),
        ("Google Inc.", "tpu"),
        ("Google", "v100"),
    }
    html = client.get("/r/training-v0.5/?submitter=Google+Inc.").content.decode()
    # One choice per organisation, counting all its rows, and the query is written in its canonical name.
    assert (
        '<input type="checkbox" name="submitter" value="Google" checked> Google '
        '<span class="n" data-count>(2)</span></label>' in html
    )
    assert "Google Inc. <" not in html and "NVIDIA <" in html and "Nvidia <" not in html
    assert 'href="?submitter=Google&amp;format=csv"' in html
    # The rows themselves keep the names as submitted (under the system's name).
    # Each row's submitter as MLCommons shows it, linked to the organisation's page.
    assert '<a class="submitter" href="/organisations/Google/">Google Inc.</a>' in html
    assert '<a class="submitter" href="/organisations/Google/">Google</a>' in html


@pytest.mark.django_db
def test_the_api_filters_by_organisation_and_gives_both_names(client, history):
    body = client.get("/api/v1/results/?submitter=NVIDIA").json()
    assert {(r["round"], r["submitter"], r["organisation"]) for r in body["results"]} == {
        ("training-v0.5", "Nvidia", "NVIDIA"),
        ("training-v5.1", "NVIDIA", "NVIDIA"),
    }
    assert client.get("/api/v1/results/?organisation=nvidia").json()["count"] == 2
    assert client.get("/api/v1/results/?submitter=Google+Inc.").json()["count"] == 2
    assert client.get("/api/v1/results/?submitter=Google&round=training-v5.1").json()["count"] == 0
    systems = client.get("/api/v1/systems/?organisation=Google").json()["results"]
    assert {(s["submitter"], s["organisation"]) for s in systems} == {
        ("Google Inc.", "Google"),
        ("Google", "Google"),
    }
    ordered = client.get("/api/v1/results/?round=training-v0.5&ordering=organisation").json()[
        "results"
    ]
    assert [r["organisation"] for r in ordered] == ["Google", "Google", "NVIDIA"]


@pytest.mark.django_db
def test_progress_follows_one_organisation_across_its_names(client, rounds, history):
    html = client.get("/progress/?organisation=NVIDIA").content.decode()
    chart = json.loads(
        re.search(r'data-chart="chart-progress">(.*?)</script>', html, re.S).group(1)
    )
    points = sorted((x, y) for trace in chart["data"] for x, y in zip(trace["x"], trace["y"]))
    # The x axis is the rounds' publication dates (46e168b).
    v05, v51 = rounds["training-v0.5"], rounds["training-v5.1"]
    assert points == [
        (v05.publication_date.isoformat(), 100.0),
        (v51.publication_date.isoformat(), 10.0),
    ]  # not Google's 50, nor AMD's 5
    assert "NVIDIA: DGX-1" in html and "NVIDIA: GB200" in html and "Nvidia:" not in html
    assert '<option value="NVIDIA" selected>NVIDIA</option>' in html
    assert [
        o for o in re.findall(r'<option value="([^"]*)"', html.split('id="id_organisation"')[1])
    ] == ["", "AMD", "Google", "NVIDIA"]
    # Any of the names selects it, and the page is the same (but for the language switcher's links, which
    # keep the address as asked).
    switcher = re.compile(r'<nav class="languages".*?</nav>', re.S)
    assert switcher.sub("", client.get("/progress/?organisation=Nvidia").content.decode()) == (
        switcher.sub("", html)
    )
    # Everyone: the round's best, whoever holds it, named by organisation.
    html = client.get("/progress/").content.decode()
    assert "Google: TPU v3" in html and "AMD: MI355X" in html and "Google Inc.:" not in html
    html = client.get("/progress/?organisation=Nobody").content.decode()
    assert "No organisation called “Nobody”" in html and "AMD: MI355X" in html


@pytest.mark.django_db
def test_compare_finds_a_system_by_any_name_of_its_organisation(client, history):
    html = client.get("/r/training-v0.5/compare/?s=NVIDIA/dgx1&s=google/tpu").content.decode()
    assert "Nvidia: DGX-1" in html and "Google Inc.: TPU v3" in html and "Not found" not in html
    assert '<span class="muted">(NVIDIA)</span>' in html
    html = client.get("/r/training-v0.5/compare/?s=Nvidia/dgx1&s=Intel/dgx1").content.decode()
    assert "Not found in this round's published results: Intel/dgx1" in html


@pytest.mark.django_db
def test_result_and_system_pages_show_the_name_as_submitted(client, history):
    html = client.get("/r/training-v0.5/Nvidia/dgx1/resnet/").content.decode()
    assert "Nvidia: DGX-1" in html and "NVIDIA: DGX-1" not in html
    html = client.get("/r/training-v0.5/Google%20Inc./tpu/").content.decode()
    assert "Google Inc.: TPU v3" in html


@pytest.mark.django_db
def test_load_rounds_refiles_submitters_and_refreshes_the_tables(client, history):
    Submitter.objects.filter(name="Nvidia").update(
        organisation="Old name"
    )  # filed by an older alias list
    assert rounds.refresh_submitters() == 1
    assert Submitter.objects.get(name="Nvidia").organisation == "NVIDIA"

    Submitter.objects.filter(name="Nvidia").update(organisation="Old name")
    Round.objects.filter(key="training-v0.5").update(cache_token="before")
    assert table_rows(client, "training-v0.5", "submitter=Old+name") == {
        ("Nvidia", "dgx1")
    }  # and cached so
    out = io.StringIO()
    call_command("load_rounds", stdout=out)
    assert "organisations: 1 submitter(s) re-filed" in out.getvalue()
    assert table_rows(client, "training-v0.5", "submitter=NVIDIA") == {("Nvidia", "dgx1")}
    assert "Old name" not in client.get("/r/training-v0.5/").content.decode()
    call_command("load_rounds", stdout=out)
    assert out.getvalue().endswith("organisations: 0 submitter(s) re-filed\n")
