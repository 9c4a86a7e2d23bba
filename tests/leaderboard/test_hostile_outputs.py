"""Outputs built from bundle text: pages, download names (RFC 6266) and CSV cells, for hostile names."""

import csv
import io
import json
import re
from urllib.parse import quote, unquote

import pandas as pd
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command

from leaderboard.models import Run
from leaderboard.roundtable.exports import CSVWriter
from submissions.models import Submission

from .. import leaderboard_factories as make
from ..bundles import bundle_bytes

pytestmark = pytest.mark.usefixtures("eager")
EVIL = "Evil\n\"=cmd|' /C calc'!A0"
# What the header must be: an ASCII file name of safe characters, then the exact one percent-encoded.
SAFE_HEADER = re.compile(
    r"""attachment; filename="([A-Za-z0-9._-]+)"; filename\*=UTF-8''([A-Za-z0-9%._~-]+)"""
)


@pytest.fixture
def evil(rounds):
    """A published result of the submitter EVIL whose system's fields start formulas, with its runs; and one
    of a second system whose time is negative (as no real result is), to see numbers stay numbers."""
    v51 = rounds["training-v5.1"]
    system = make.system(
        v51,
        EVIL,
        "alpha",
        name='=HYPERLINK("http://x","y")',
        processor_model="+1+1",
        accelerator_model="@SUM(A1)",
        framework="\t=1",
    )
    result = make.result(system, "retinanet", 10, runs=5)
    Run.objects.filter(result=result, index=1).update(failure_reason="-2+3", status="=cmd")
    make.result(make.system(v51, "Plain", "beta"), "retinanet", -5)
    return result


def header_names(response) -> tuple[str, str]:
    """(the ASCII fallback, the exact name) of a download's Content-Disposition, which must be safe."""
    found = SAFE_HEADER.fullmatch(response["Content-Disposition"])
    assert found, response["Content-Disposition"]
    return found[1], unquote(found[2], errors="strict")


def csv_rows(response) -> list[dict]:
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    return list(csv.DictReader(io.StringIO(response.content.decode())))


@pytest.mark.django_db(transaction=True)  # eager tasks run in on_commit hooks
def test_the_runs_csv_of_a_hostile_submitter_downloads_with_a_safe_name_and_no_formulas(
    client, evil
):
    url = evil.get_absolute_url()
    assert (
        url == "/r/training-v5.1/Evil%0A%22=cmd%7C'%20%252FC%20calc'!A0/alpha/retinanet/"
    )  # its '/' kept apart
    response = client.get(url + "?format=csv")
    fallback, exact = header_names(response)
    assert exact == f"training-v5.1-{EVIL}-alpha-retinanet-runs.csv"
    assert fallback == "training-v5.1-Evil_cmd_C_calc_A0-alpha-retinanet-runs.csv"
    rows = csv_rows(response)
    assert (rows[1]["failure_reason"], rows[1]["status"]) == ("'-2+3", "'=cmd")
    assert rows[0]["minutes"] == "10.0" and rows[0]["index"] == "0"

    response = client.get(url + "?format=json")
    assert header_names(response)[1] == f"training-v5.1-{EVIL}-alpha-retinanet-runs.json"
    assert (response.json()[1]["failure_reason"], response.json()[1]["status"]) == (
        "-2+3",
        "=cmd",
    )  # JSON as is


@pytest.mark.django_db(transaction=True)  # eager tasks run in on_commit hooks
def test_the_rounds_exports_hold_the_hostile_names_as_text(client, evil):
    response = client.get("/r/training-v5.1/?format=csv")
    assert response["Content-Disposition"] == 'attachment; filename="training-v5.1.csv"'
    rows = {row["System URL"].rstrip("/").rsplit("/", 1)[-1]: row for row in csv_rows(response)}
    alpha = rows["alpha"]
    assert (
        alpha["Organization"] == EVIL
    )  # it starts with "E": a cell, newline and all, that no spreadsheet runs
    assert (
        alpha["System Name"],
        alpha["Processor"],
        alpha["Accelerator"],
        alpha["Software"],
    ) == (
        '\'=HYPERLINK("http://x","y")',
        "'+1+1",
        "'@SUM(A1)",
        "'\t=1",
    )
    assert (
        rows["beta"]["Object detection (RetinaNet) (minutes)"] == "-5.0"
    )  # a number, not neutralised

    filtered = client.get(f"/r/training-v5.1/?format=json&submitter={quote(EVIL)}")
    assert filtered.status_code == 200
    assert filtered["Content-Disposition"] == 'attachment; filename="training-v5.1-filtered.json"'
    records = json.loads(filtered.content)
    assert [(r["Organization"], r["System Name"], r["Software"]) for r in records] == [
        (EVIL, '=HYPERLINK("http://x","y")', "\t=1")
    ]


@pytest.mark.django_db(transaction=True)  # eager tasks run in on_commit hooks
def test_the_command_lines_csv_export_neutralises_too(evil, capsys):
    call_command("export_results", "--round", "training-v5.1", "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [(r["submitter"], r["system"], r["score_minutes"]) for r in rows] == [
        (EVIL, "alpha", "10.0"),
        ("Plain", "beta", "-5.0"),
    ]


@pytest.mark.django_db(transaction=True)  # eager tasks run in on_commit hooks
def test_a_unicode_name_gets_an_ascii_fallback_and_its_exact_name(client, rounds):
    make.result(make.system(rounds["training-v5.1"], "Ünïcode 日本", "α"), "retinanet", 10, runs=5)
    response = client.get(
        f"/r/training-v5.1/{quote('Ünïcode 日本')}/{quote('α')}/retinanet/?format=csv"
    )
    assert header_names(response) == (
        "training-v5.1-Unicode_--retinanet-runs.csv",
        "training-v5.1-Ünïcode 日本-α-retinanet-runs.csv",
    )


@pytest.mark.django_db(transaction=True)  # eager tasks run in on_commit hooks
def test_the_findings_download_is_named_safely(client, rounds, cast, tmp_path):
    client.force_login(cast["member_a"])
    client.post(
        "/submissions/upload/",
        {
            "round": "training-v5.1",
            "bundle": SimpleUploadedFile(f"{EVIL}.tgz", bundle_bytes(tmp_path)),
        },
    )
    submission = Submission.objects.get()
    response = client.get(f"/submissions/{submission.uid}/findings.json")
    assert response.status_code == 200
    assert (
        response["Content-Disposition"]
        == f'attachment; filename="submission-{submission.uid}-findings.json"'
    )


def test_only_text_cells_that_start_a_formula_are_neutralised():
    frame = pd.DataFrame(
        {
            "text": ["=1+2", "+1", "-x", "@SUM(A1)", "\tz", "\rz", "plain", "a\r=b", None],
            "number": [-1.5, 2.0, -3.0, 0.0, 1e-9, -1e9, 7.0, 8.0, None],
            "count": pd.array([-1, 2, None, 4, 5, 6, 7, 8, 9], dtype="Int64"),
        }
    )
    text = CSVWriter().render(frame).decode()
    assert (
        '\r\n"a\r=b",' in text
    )  # quoted: a bare CR would start a row of its own, "=b" its first cell
    rows = list(csv.reader(io.StringIO(text, newline="")))[1:]
    assert [r[0] for r in rows] == [
        "'=1+2",
        "'+1",
        "'-x",
        "'@SUM(A1)",
        "'\tz",
        "'\rz",
        "plain",
        "a\r=b",
        "",
    ]
    assert [r[1] for r in rows] == [
        "-1.5",
        "2.0",
        "-3.0",
        "0.0",
        "1e-09",
        "-1000000000.0",
        "7.0",
        "8.0",
        "",
    ]
    assert [r[2] for r in rows] == ["-1", "2", "", "4", "5", "6", "7", "8", "9"]
    assert frame["text"][0] == "=1+2"  # the caller's frame is left as it was


@pytest.mark.django_db(transaction=True)  # eager tasks run in on_commit hooks
def test_names_with_a_slash_or_a_percent_sign_have_pages_of_their_own(client, rounds):
    """A submitter's name is text from a bundle (a system description's field): '/' and '%' are kept apart from
    the path's own; a name without them has the URL it always had."""
    v51 = rounds["training-v5.1"]
    names = ["Dell/EMC", "50%2Foff", "100%", "Acme"]
    results = [
        make.result(make.system(v51, name, "alpha"), "retinanet", 10, runs=5) for name in names
    ]
    assert results[3].get_absolute_url() == "/r/training-v5.1/Acme/alpha/retinanet/"
    assert client.get("/r/training-v5.1/").status_code == 200  # every row links to its system
    for name, result in zip(names, results):
        page = client.get(result.system.get_absolute_url())
        assert page.status_code == 200 and page.context["system"].submitter.name == name
        assert client.get(result.get_absolute_url()).context["result"].pk == result.pk
    assert (
        client.get("/r/training-v5.1/Dell/EMC/alpha/").status_code == 404
    )  # a '/' is the path's own
