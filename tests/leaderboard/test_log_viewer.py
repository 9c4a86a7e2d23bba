"""The log viewer: a run's log from the stored bundle, a page at a time, public exactly when its result
is; the lines that findings name linked from the result page and marked, in a reader's words."""

import gzip
import io
import tarfile
import zipfile
from pathlib import Path

import pytest

from leaderboard.logviewer import logview
from leaderboard.models import Result, Run
from submissions.checking.bundles.files import TarFiles
from submissions.models import Finding, Submission
from submissions.synthetic.bundles import SystemSpec, write_bundle

from ..bundles import TARGETS, log_url, publish
from ..uploads import token_for, upload_whole

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


# Lines of each format the portal reads, as MLPerf's loggers of the time wrote them.
MLLOG = (
    ':::MLLOG {"namespace": "", "time_ms": 1746000000000, "event_type": "INTERVAL_END", "key": "run_stop", '
    '"value": null, "metadata": {"file": "train.py", "lineno": 9, "status": "success"}}'
)
MLLOG_EVAL = (
    ':::MLLOG {"namespace": "", "time_ms": 1, "event_type": "POINT_IN_TIME", "key": "eval_accuracy", '
    '"value": 0.7591, "metadata": {"epoch_num": 3}}'
)
MLL = ':::MLL 1560815478.123 eval_accuracy: {"value": 0.75, "metadata": {"file": "x.py", "lineno": 1}}'
V05 = ':::MLPv0.5.0 resnet 1541635123.54 (resnet/imagenet_main.py:123) eval_accuracy: {"epoch": 3, "value": 0.71}'
ALIBABA = "MLPerf: resnet [06/13/19 00:30:56], eval_accuracy: 0.7592"


@pytest.mark.parametrize(
    "line, key, value",
    [
        (MLLOG, "run_stop", "null"),
        (MLLOG_EVAL, "eval_accuracy", "0.7591"),
        (MLL, "eval_accuracy", "0.75"),
        (V05, "eval_accuracy", '{"epoch": 3, "value": 0.71}'),
        (ALIBABA, "eval_accuracy", "0.7592"),
        (":::MLPv0.5.0 ncf 1.0 (x.py:1) run_stop", "run_stop", None),
    ],
)
def test_a_records_key_and_value_are_picked_out_of_each_format(line, key, value):
    parts = logview.record_parts(line)
    assert "".join(piece for piece, _ in parts) == line  # nothing lost or added
    roles = {role: piece for piece, role in parts if role}
    assert roles["key"] == key and roles.get("value") == value
    assert logview.record_key(line) == key


def test_a_line_that_is_no_record_is_one_plain_piece():
    page = logview.read_page(opener(b"plain text: 1\n" + MLLOG.encode() + b"\n"), 1)
    assert page.lines[0].parts == [("plain text: 1", "")]
    assert ("run_stop", "key") in page.lines[1].parts


def long_log(lines: int = 2500) -> bytes:
    """A log whose run_start is on line 2, evaluations every 500 lines and run_stop on the last line."""
    out = [b"starting", MLLOG.replace("run_stop", "run_start").encode()]
    for n in range(3, lines):
        out.append(MLLOG_EVAL.encode() if n % 500 == 0 else b"step %d loss 1.0" % n)
    out.append(MLLOG.encode())
    return b"\n".join(out) + b"\n"


def test_a_search_reads_the_whole_log_and_lists_its_hits_with_their_lines():
    index = logview.scan(opener(long_log()), query="RUN_STOP")
    assert [hit.number for hit in index.hits] == [2500] and index.matched == 1
    assert index.total_lines == 2500
    assert ("run_stop", True) in index.hits[0].parts
    assert index.landmarks == {"run_start": 2, "eval_accuracy": 500, "run_stop": 2500}
    assert index.keys == {"eval_accuracy": 4, "run_start": 1, "run_stop": 1}


def test_a_key_filter_lists_only_that_keys_records_and_hits_are_capped():
    data = long_log()
    assert [h.number for h in logview.scan(opener(data), key="eval_accuracy").hits] == [
        500,
        1000,
        1500,
        2000,
    ]
    # "loss" is on every step line: more than the list holds, all counted
    index = logview.scan(opener(data), query="loss")
    assert index.matched == 2500 - 3 - 4 and len(index.hits) == logview.MAX_HITS
    assert logview.scan(opener(data), query="loss", key="run_stop").matched == 0


def test_a_hit_on_a_long_line_is_shown_around_the_match():
    data = b"x" * 5000 + b" needle " + b"y" * 5000 + b"\n"
    hit = logview.scan(opener(data), query="needle", max_chars=20000).hits[0]
    assert "needle" in hit.text and len(hit.text) <= logview.HIT_CHARS + 2


# --- through the pages ------------------------------------------------------------------------------------


@pytest.mark.usefixtures("eager")
@pytest.mark.parametrize("archive", [None, "tgz"])
@pytest.mark.django_db(transaction=True)  # eager tasks run in on_commit hooks
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
@pytest.mark.django_db(transaction=True)  # eager tasks run in on_commit hooks
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
@pytest.mark.django_db(transaction=True)  # eager tasks run in on_commit hooks
def test_a_findings_line_is_linked_and_marked_and_no_rule_expression_reaches_a_reader(
    client, rounds, cast, tmp_path
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
    cast["member_a"].is_staff = True
    cast["member_a"].save()
    client.force_login(cast["member_a"])
    report = client.get(submission.get_absolute_url()).content.decode()
    assert "v[&#x27;value&#x27;] &gt;= 0.72" in report


@pytest.mark.usefixtures("eager")
@pytest.mark.django_db(transaction=True)  # eager tasks run in on_commit hooks
def test_a_log_whose_bundle_was_deleted_says_so(client, rounds, tmp_path, settings):
    submission = publish(tmp_path)
    assert client.get(log_url("alpha", 0)).status_code == 200  # its index is kept from now on
    (Path(settings.MEDIA_ROOT) / submission.bundle.name).unlink()
    response = client.get(log_url("alpha", 0))
    assert response.status_code == 404 and "no longer stored" in response.content.decode()


@pytest.mark.usefixtures("eager")
@pytest.mark.django_db(transaction=True)  # eager tasks run in on_commit hooks
def test_the_raw_log_downloads_as_stored_and_only_when_the_log_page_may_be_seen(
    client, rounds, tmp_path
):
    publish(tmp_path)
    run = Run.objects.get(result__system__key="alpha", index=2)
    stored = (tmp_path / "src" / run.path).read_bytes()  # the file as written into the bundle
    response = client.get(log_url("alpha", 2) + "raw/")
    assert response.status_code == 200 and b"".join(response.streaming_content) == stored
    assert response["Content-Type"].startswith("text/plain")
    assert "attachment" in response["Content-Disposition"]
    # Streamed gzipped to a client that takes gzip (portal.settings: GZipMiddleware), still whole.
    packed = client.get(log_url("alpha", 2) + "raw/", HTTP_ACCEPT_ENCODING="gzip")
    assert packed.streaming and packed["Content-Encoding"] == "gzip"
    assert gzip.decompress(b"".join(packed.streaming_content)) == stored
    assert client.get(log_url("beta", 0) + "raw/").status_code == 404  # held: not public
    page = client.get(log_url("alpha", 2)).content.decode()
    assert f'href="{log_url("alpha", 2)}raw/"' in page


# Every archive form an upload may take (submissions/intake/forms.py), as tarfile writes it; None: a zip.
ARCHIVES = {
    ".tar": "w",
    ".tar.gz": "w:gz",
    ".tgz": "w:gz",
    ".tar.xz": "w:xz",
    ".txz": "w:xz",
    ".zip": None,
}


def packed(root: Path, suffix: str) -> bytes:
    """The submitter's folder `root` as an archive of the form `suffix`, in memory."""
    buffer = io.BytesIO()
    if ARCHIVES[suffix] is None:
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zipped:
            for path in sorted(root.rglob("*")):
                zipped.write(path, path.relative_to(root.parent))
    else:
        with tarfile.open(fileobj=buffer, mode=ARCHIVES[suffix]) as tar:
            tar.add(root, arcname=root.name)
    return buffer.getvalue()


def upload_alpha(client, cast, tmp_path, suffix: str) -> Path:
    """Acme's alpha uploaded through the API as an archive of the form `suffix` and checked (the work folder
    is cleared once the submission is final); its member signed in. Returns the folder it was packed from."""
    runs = {"retinanet": [10.0, 12.0, 11.0, 13.0, 9.0]}
    root = write_bundle(tmp_path / "src", "Acme", [SystemSpec("alpha", results=runs)], TARGETS)
    data = packed(root, suffix)
    done = upload_whole(client, token_for(cast["member_a"]), data, name=f"acme{suffix}")
    assert done.status_code == 201, done.content
    assert Submission.objects.get().status == Submission.Status.VALID
    client.force_login(cast["member_a"])  # the result is not public: its organisation reads it
    return root.parent


def assert_logs_read_as_uploaded(client, src: Path, suffix: str):
    """Each run's raw file is its member's bytes, and its log page finds its run_stop on its line."""
    for run in Run.objects.filter(result__system__key="alpha").order_by("index"):
        member = (src / run.path).read_bytes()
        raw = client.get(log_url("alpha", run.index) + "raw/")
        assert raw.status_code == 200, (suffix, run.path)
        assert b"".join(raw.streaming_content) == member, (suffix, run.path)
        page = client.get(log_url("alpha", run.index) + "?q=run_stop")
        assert page.status_code == 200, (suffix, run.path)
        lines = member.splitlines()
        stop = next(n for n, line in enumerate(lines, start=1) if b'"run_stop"' in line)
        assert f'data-hit="{stop}"' in page.content.decode(), (suffix, run.path)


@pytest.mark.usefixtures("eager")
@pytest.mark.parametrize("suffix", list(ARCHIVES))
@pytest.mark.django_db(transaction=True)  # eager tasks run in on_commit hooks
def test_an_uploaded_runs_log_page_and_raw_file_are_the_bytes_uploaded_in_every_archive_form(
    client, rounds, cast, tmp_path, suffix
):
    """A .tgz's raw file was cut off (the member's offsets read in the compressed bundle)."""
    src = upload_alpha(client, cast, tmp_path, suffix)
    assert_logs_read_as_uploaded(client, src, suffix)


@pytest.mark.usefixtures("eager")
@pytest.mark.django_db(transaction=True)  # eager tasks run in on_commit hooks
def test_an_index_that_reads_a_compressed_bundle_as_its_plain_tar_is_made_again(
    client, rounds, cast, tmp_path, settings
):
    """The log viewer's index of a .tgz that the portal left before, pointing at the compressed bundle."""
    src = upload_alpha(client, cast, tmp_path, ".tgz")
    submission = Submission.objects.get()
    index = Path(settings.MEDIA_ROOT) / "logs" / str(submission.pk) / "index.json"
    assert client.get(log_url("alpha", 0)).status_code == 200  # the index is made
    stale = TarFiles.load(index)
    stale.archive = submission.bundle.path
    stale.save(index)
    assert_logs_read_as_uploaded(client, src, ".tgz")


@pytest.mark.usefixtures("eager")
@pytest.mark.django_db(transaction=True)  # eager tasks run in on_commit hooks
def test_a_search_on_the_log_page_lists_the_lines_of_the_whole_log(client, rounds, tmp_path):
    publish(tmp_path)
    run = Run.objects.get(result__system__key="alpha", index=0)
    lines = (tmp_path / "src" / run.path).read_text().splitlines()
    stop = next(n for n, text in enumerate(lines, start=1) if '"run_stop"' in text)
    page = client.get(log_url("alpha", 0) + "?q=run_stop").content.decode()
    assert f'data-hit="{stop}"' in page and "1 line holding" in page
    assert 'data-jump="run_stop"' in page and f'href="?line={stop}#L{stop}"' in page
    assert '<span class="key">run_stop</span>' in page


def test_the_lines_of_a_page_are_escaped_in_blocks_with_their_marks():
    from leaderboard.logviewer.loghtml import CHUNK, lines_html

    data = b'<script>alert(1)</script>\n:::MLLOG {"key": "<b>", "value": "<i>"}\n' + b"x\n" * 200
    page = logview.read_page(opener(data), 1)
    page.lines[0].marks = [{"severity": "warning", "message": "<img src=x>"}]
    html = str(lines_html(page, target=2))
    assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert '<span class="key">&lt;b&gt;</span>' in html and "<img" not in html
    assert 'id="L2" class="ln rec target"' in html and 'id="L1" class="ln flagged"' in html
    assert html.count('<div class="chunk">') == -(-page.total_lines // CHUNK) == 3
