"""Outputs built from bundle text: pages, download names (RFC 6266) and CSV cells, for hostile names."""

import csv
import io
import re
from urllib.parse import quote, unquote

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from leaderboard.models import Run
from submissions.models import Submission

from . import leaderboard_factories as make
from .test_pages import bundle_bytes

pytestmark = pytest.mark.usefixtures("eager")
EVIL = "Evil\n\"=cmd|' /C calc'!A0"
# What the header must be: an ASCII file name of safe characters, then the exact one percent-encoded.
SAFE_HEADER = re.compile(r"""attachment; filename="([A-Za-z0-9._-]+)"; filename\*=UTF-8''([A-Za-z0-9%._~-]+)""")


@pytest.fixture
def evil(rounds):
    """A published result of the submitter EVIL whose system's fields start formulas, with its runs; and one
    of a second system whose time is negative (as no real result is), to see numbers stay numbers."""
    v51 = rounds["training-v5.1"]
    system = make.system(v51, EVIL, "alpha", name="=HYPERLINK(\"http://x\",\"y\")", processor_model="+1+1",
                         accelerator_model="@SUM(A1)", framework="\t=1")
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


def test_the_runs_csv_of_a_hostile_submitter_downloads_with_a_safe_name(client, evil):
    url = evil.get_absolute_url()
    assert url == "/r/training-v5.1/Evil%0A%22=cmd%7C'%20%252FC%20calc'!A0/alpha/retinanet/"  # its '/' kept apart
    response = client.get(url + "?format=csv")
    fallback, exact = header_names(response)
    assert exact == f"training-v5.1-{EVIL}-alpha-retinanet-runs.csv"
    assert fallback == "training-v5.1-Evil_cmd_C_calc_A0-alpha-retinanet-runs.csv"
    assert csv_rows(response)[0]["minutes"] == "10.0"

    response = client.get(url + "?format=json")
    assert header_names(response)[1] == f"training-v5.1-{EVIL}-alpha-retinanet-runs.json"


def test_a_unicode_name_gets_an_ascii_fallback_and_its_exact_name(client, rounds):
    make.result(make.system(rounds["training-v5.1"], "Ünïcode 日本", "α"), "retinanet", 10, runs=5)
    response = client.get(f"/r/training-v5.1/{quote('Ünïcode 日本')}/{quote('α')}/retinanet/?format=csv")
    assert header_names(response) == ("training-v5.1-Unicode_--retinanet-runs.csv",
                                       "training-v5.1-Ünïcode 日本-α-retinanet-runs.csv")


def test_the_findings_download_is_named_safely(client, rounds, users, tmp_path):
    client.force_login(users["owner"])
    client.post("/submissions/upload/", {"round": "training-v5.1",
                                         "bundle": SimpleUploadedFile(f"{EVIL}.tgz", bundle_bytes(tmp_path))})
    submission = Submission.objects.get()
    response = client.get(f"/submissions/{submission.pk}/findings.json")
    assert response.status_code == 200
    assert response["Content-Disposition"] == f'attachment; filename="submission-{submission.pk}-findings.json"'


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

