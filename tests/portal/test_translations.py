"""The Simplified Chinese catalogue is whole, and every page a person reads is in it.

- msgfmt's statistics on locale/zh_Hans: no untranslated entry, no fuzzy one, and nothing msgfmt --check
  refuses (a placeholder lost in translation).
- Every page, rendered for a Chinese reader with a catalogue of rounds, results, findings and a submitter's
  upload: its visible text and its labels (title, aria-label, placeholder, alt, meta description) hold no run
  of three English words once the data is taken out (names as published: rounds, benchmarks, systems,
  organisations, files). A string left unmarked, or marked and missing from the catalogue, shows there in
  English and fails the page that shows it.
"""

import html
import json
import re
import shutil
import subprocess

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from leaderboard.models import Benchmark, Result, Round, Submitter, System
from notifications.models import Notification
from submissions.models import Finding, Submission

from .. import leaderboard_factories as make
from ..bundles import bundle_bytes
from ..conftest import ROOT

CATALOGUE = ROOT / "locale" / "zh_Hans" / "LC_MESSAGES" / "django.po"
CHINESE = {"accept-language": "zh-CN,zh;q=0.9"}
# Three words of English in a row: a sentence or a label left in English.
ENGLISH_RUN = re.compile(r"\b[A-Za-z][a-z]+(?:[ ,;:'’/-]+[A-Za-z][a-z]+){2,}\b")
# What is not prose: code, scripts, styles, the log's lines, the switcher's own names.
NOT_PROSE = re.compile(
    r"<(script|style|code|pre|kbd|samp)\b.*?</\1>|<div class=\"log\".*?</div>|<nav class=\"languages\".*?</nav>",
    re.S,
)
LABELS = re.compile(
    r'\s(?:title|aria-label|placeholder|alt)="([^"]*)"|<meta name="description" content="([^"]*)"'
)


@pytest.mark.parametrize("domain", ["django", "djangojs"])
def test_the_chinese_catalogue_has_no_untranslated_or_fuzzy_entry(domain):
    msgfmt = shutil.which("msgfmt")
    if msgfmt is None:
        pytest.fail("GNU gettext's msgfmt is missing: apt-get install -y gettext (make setup does)")
    done = subprocess.run(
        [msgfmt, "--check", "--statistics", "-o", "/dev/null", str(CATALOGUE.with_stem(domain))],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    statistics = done.stderr.strip().splitlines()[-1]
    assert re.fullmatch(r"\d+ translated messages\.", statistics), statistics


@pytest.mark.django_db
def test_the_scripts_words_come_in_the_pages_language(client):
    chinese = client.get("/jsi18n/", headers=CHINESE).content.decode()
    english = client.get("/jsi18n/").content.decode()
    compare, checking = (json.dumps(text)[1:-1] for text in ("比较所选", "正在校验提交包的 sha256"))
    assert compare in chinese and checking in chinese  # as the catalogue's JSON writes them
    assert compare not in english


def english_runs(page: str, data: set[str]) -> list[str]:
    """The runs of English words a reader of the page sees, its data (names as published) taken out."""
    text = NOT_PROSE.sub(" ", page)
    labels = [html.unescape(a or b) for a, b in LABELS.findall(text)]
    visible = html.unescape(re.sub(r"<[^>]+>", " ", text))
    visible = re.sub(r"https?://\S+", " ", visible)  # an address is no prose
    runs = []
    for chunk in [visible, *labels]:
        for value in sorted(data, key=len, reverse=True):
            chunk = chunk.replace(value, " ")
        runs += [m.group(0) for m in ENGLISH_RUN.finditer(chunk)]
    return runs


def _data_words() -> set[str]:
    """Every name the catalogue holds as published, and what a bundle or a checker wrote."""
    words = set()
    for model, fields in (
        (Round, ("name", "notes", "reference_system", "ruleset", "results_repository")),
        (Benchmark, ("name", "key", "quality_target")),
        (Submitter, ("name", "organisation")),
        (
            System,
            (
                "name",
                "key",
                "accelerator_model",
                "processor_model",
                "framework",
                "interconnect",
                "description_path",
            ),
        ),
        (Result, ("path", "score_message")),
        (Submission, ("original_name", "message")),
        (Finding, ("message", "hint", "file")),
        # A notification's title and text are written when it happens, by a worker, and kept: in English
        # (the portal keeps no recipient's language).
        (Notification, ("title", "text")),
    ):
        for row in model.objects.values_list(*fields):
            words |= {str(v) for v in row if v and len(str(v)) > 1}
    return words


@pytest.fixture
def catalogue(rounds, cast, client, tmp_path, eager):
    """A live round with a submitter's upload checked (findings, results, runs), and published results of
    other systems beside it."""
    v51 = rounds["training-v5.1"]
    fast = make.system(
        v51, "Dell", "xe9680", name="XE9680", accelerator_model="NVIDIA H200-SXM5-141GB"
    )
    make.result(fast, "retinanet", 30)
    make.result(fast, "rgat", 5)
    other = make.system(v51, "Lenovo", "sr680a", name="SR680a", category="cloud")
    make.result(other, "retinanet", 20)
    client.force_login(cast["member_a"])
    client.post(
        "/submissions/upload/",
        {"round": v51.key, "bundle": SimpleUploadedFile("acme.tgz", bundle_bytes(tmp_path))},
        headers=CHINESE,
    )
    return v51


def _pages(v51) -> dict[str, str]:
    submission = Submission.objects.get(original_name="acme.tgz")
    result = Result.objects.filter(system__submission=submission).first()
    return {
        "home": "/",
        "rounds": "/rounds/",
        "round": f"/r/{v51.key}/",
        "round, per accelerator": f"/r/{v51.key}/?show=acc_hours&division=closed",
        "round, by availability": f"/r/{v51.key}/?group=availability&cols=links&cols=public_id",
        "round not imported": "/r/training-v2.0/",
        "system": "/r/training-v5.1/Dell/xe9680/",
        "result": "/r/training-v5.1/Dell/xe9680/retinanet/",
        "compare": "/r/training-v5.1/compare/?s=Dell/xe9680&s=Lenovo/sr680a",
        "progress": "/progress/",
        "upload": "/submissions/upload/",
        "submissions": "/submissions/",
        "submission": submission.get_absolute_url(),
        "receipt": f"/submissions/{submission.uid}/receipt/",
        "submitter's result": result.get_absolute_url(),
        "notifications": "/notifications/",
    }


@pytest.mark.django_db(transaction=True)
def test_every_page_reads_in_chinese(client, catalogue):
    pages = _pages(catalogue)
    data = _data_words()
    untranslated = {}
    for name, url in pages.items():
        response = client.get(url, headers=CHINESE)
        assert response.status_code == 200, (name, url, response.status_code)
        page = response.content.decode()
        assert '<html lang="zh-hans">' in page, name
        runs = english_runs(page, data)
        if runs:
            untranslated[name] = runs
    assert not untranslated, "English left on pages read in Chinese:\n" + "\n".join(
        f"{name}: {runs}" for name, runs in untranslated.items()
    )


def test_the_detector_finds_english_and_leaves_data_and_code_alone():
    page = (
        '<p title="Runs counted here">运行 <code>python manage.py load_rounds now</code> '
        "XE9680 Tyche Blackwell Ultra</p>"
    )
    assert english_runs(page, {"XE9680 Tyche Blackwell Ultra"}) == ["Runs counted here"]
    assert english_runs("<p>训练时间（分钟）</p>", set()) == []
