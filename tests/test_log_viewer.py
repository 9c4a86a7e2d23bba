"""The log viewer: a run's log from the stored bundle, a page at a time, public exactly when its result
is; the lines that findings name linked from the result page and marked, in a reader's words."""

import io
import tarfile
from pathlib import Path

import pytest
from django.core.management import call_command

from leaderboard import logview
from leaderboard.models import Result, Run
from submissions.models import Finding, Submission
from submissions.synthetic.bundles import SystemSpec, write_bundle

TARGETS = {"retinanet": 0.34, "rgat": 0.72}
EXPRESSION = "v['value'] >= 0.72 and v['value'] < 1.0"


def opener(data: bytes):
    return lambda: io.BytesIO(data)


# --- one page of a log, pure ------------------------------------------------------------------------------


def test_a_page_holds_its_lines_numbered_and_counts_the_rest():
    data = b"".join(b"line %d\n" % n for n in range(1, 2501))
    page = logview.read_page(opener(data), 2, per_page=1000)
    assert (page.number, page.pages, page.total_lines) == (2, 3, 2500)
    assert (page.first, page.last) == (1001, 2000)
    assert page.lines[0].text == "line 1001" and page.lines[-1].number == 2000


def test_a_page_past_the_end_is_the_last_page_and_a_last_line_without_newline_counts():
    page = logview.read_page(opener(b"a\nb\nc"), 9, per_page=2)
    assert (page.number, page.pages, page.total_lines) == (2, 2, 3)
    assert [line.text for line in page.lines] == ["c"]


def test_mlperf_records_are_picked_out_and_a_huge_line_is_cut_not_held():
    data = (
        b'noise\n:::MLLOG {"key": "run_start"}\n'
        + b"x" * 5_000_000
        + b"\n:::MLPv0.5.0 ncf 1.0 (x.py:1) run_stop\n"
    )
    page = logview.read_page(opener(data), 1, max_chars=100)
    assert [line.record for line in page.lines] == [False, True, False, True]
    long = page.lines[2]
    assert len(long.text) == 100 and long.cut == 5_000_000 - 100


def test_bytes_that_are_not_utf8_are_shown_replaced():
    page = logview.read_page(opener(b"caf\xe9\r\n"), 1)
    assert page.lines[0].text == "caf\ufffd"


def test_the_page_of_a_line():
    assert [logview.page_of_line(n, 1000) for n in (0, 1, 1000, 1001)] == [1, 1, 1, 2]


# --- through the pages ------------------------------------------------------------------------------------


def publish(tmp_path, archive: str | None = None) -> Submission:
    """Acme's alpha (published) and beta (held: two failed runs), ingested from a folder (stored as a plain
    tar) or, with archive="tgz", from a gzipped tar (stored as uploaded)."""
    systems = [
        SystemSpec("alpha", results={"retinanet": [10.0, 12.0, 11.0, 13.0, 9.0]}),
        SystemSpec("beta", results={"retinanet": [20.0, None, None, 22.0, 23.0]}),
    ]
    root = write_bundle(tmp_path / "src", "Acme", systems, TARGETS)
    path = root
    if archive == "tgz":
        path = tmp_path / "acme.tgz"
        with tarfile.open(path, "w:gz") as tar:
            tar.add(root, arcname="Acme")
    call_command(
        "ingest", str(path), "--round", "training-v5.1", "--wait", "--publish", stdout=io.StringIO()
    )
    return Submission.objects.get()


def log_url(system: str, index: int) -> str:
    return f"/r/training-v5.1/Acme/{system}/retinanet/log/{index}/"


@pytest.mark.usefixtures("eager")
@pytest.mark.parametrize("archive", [None, "tgz"])
def test_a_runs_log_opens_from_the_result_page(client, rounds, tmp_path, archive):
    publish(tmp_path, archive)
    result = Result.objects.get(system__key="alpha")
    page = client.get(result.get_absolute_url()).content.decode()
    assert f'href="{log_url("alpha", 2)}"' in page
    response = client.get(log_url("alpha", 2))
    text = response.content.decode()
    assert response.status_code == 200
    run = Run.objects.get(result=result, index=2)
    assert run.path in text and 'class="ln rec"' in text
    assert 'id="L1"' in text and 'href="?line=1#L1"' in text


@pytest.mark.usefixtures("eager")
def test_a_log_is_public_only_when_its_result_is(client, rounds, tmp_path):
    publish(tmp_path)
    assert not Result.objects.get(system__key="beta").published  # held by its failed runs
    assert client.get(log_url("beta", 0)).status_code == 404
    assert client.get(log_url("alpha", 99)).status_code == 404
    for junk in ("?line=x", "?page=-3", "?line=99999999999999999999"):
        assert client.get(log_url("alpha", 0) + junk).status_code == 200
    assert (
        client.get(log_url("alpha", 0) + "?page=%00").status_code == 400
    )  # NUL: refused site-wide


@pytest.mark.usefixtures("eager")
def test_a_findings_line_is_linked_and_marked_and_no_rule_expression_reaches_a_reader(
    client, rounds, users, tmp_path
):
    submission = publish(tmp_path)
    result = Result.objects.get(system__key="alpha")
    run = Run.objects.get(result=result, index=1)
    Finding.objects.create(
        validation=submission.validations.get(),
        result=result,
        run=run,
        severity="warning",
        rule="mlperf.compliance",
        file=run.path,
        line=3,
        message=f"The log line for 'eval_accuracy' fails the rule `{EXPRESSION}`.",
        hint="Log this key with the value the rule expects (mlperf-logging 4.1.68, rules x).",
    )
    page = client.get(result.get_absolute_url()).content.decode()
    assert f'href="{log_url("alpha", 1)}?line=3#L3"' in page
    assert "1 warning: log lines that do not follow MLPerf&#x27;s logging rules (1)" in page
    log = client.get(log_url("alpha", 1) + "?line=3").content.decode()
    assert 'id="L3" class="ln' in log and "flagged target" in log
    for public_page in (page, log):
        assert "v[&#x27;value&#x27;]" not in public_page and "&gt;= 0.72" not in public_page
    users["owner"].is_staff = True
    users["owner"].save()
    client.force_login(users["owner"])
    report = client.get(submission.get_absolute_url()).content.decode()
    assert "v[&#x27;value&#x27;] &gt;= 0.72" in report


@pytest.mark.usefixtures("eager")
def test_a_log_whose_bundle_was_deleted_says_so(client, rounds, tmp_path, settings):
    submission = publish(tmp_path)
    assert client.get(log_url("alpha", 0)).status_code == 200  # its index is kept from now on
    (Path(settings.MEDIA_ROOT) / submission.bundle.name).unlink()
    response = client.get(log_url("alpha", 0))
    assert response.status_code == 404 and "no longer stored" in response.content.decode()
