"""Rounds without results say so (issue 38): readers are sent to MLCommons' published results instead of an
empty table dated as if published, staff are told the command and given the button, and a round on its way
says how far it is, on the rounds' rows and its page. Through HTTP, for a reader and for staff."""

import re

import pytest
from django.utils import timezone

from leaderboard.models import RoundImport
from submissions.models import Submission

from .. import leaderboard_factories as make

pytestmark = pytest.mark.django_db

EMPTY = "training-v2.0"  # no results here
REPOSITORY = "https://github.com/mlcommons/training_results_v2.0"


def row(html: str, key: str) -> str:
    """The rounds table's row of the round `key`."""
    found = re.search(rf'<tr><th scope="row"><a href="/r/{key}/">.*?</tr>', html, re.S)
    assert found, key
    return found.group()


def test_a_reader_is_sent_to_mlcommons_for_a_round_not_imported_here(client, published_rounds):
    make.result(make.system(published_rounds["training-v5.1"], "Dell", "xe"), "retinanet", 30)
    for page in ("/", "/rounds/"):
        html = client.get(page).content.decode()
        empty = row(html, EMPTY)
        assert "Not imported here" in empty and f'href="{REPOSITORY}"' in empty
        assert 'class="num">0<' not in empty and "imported history" not in empty
        assert "import_round" not in empty  # the command is staff's
        assert "Not imported" not in row(
            html, "training-v5.1"
        )  # a round with results keeps its counts

    page = client.get(f"/r/{EMPTY}/").content.decode()
    assert "Not imported here" in page and f'href="{REPOSITORY}"' in page
    assert "MLCommons published Training v2.0 on 29 June 2022" in page
    assert "published 29 June 2022" not in page  # not dated as if published here
    assert "No published results in this round yet" not in page and "<table" not in page
    assert "<form" not in page.split("</header>")[-1]  # no filters, no import button


def test_staff_are_told_the_command_and_given_the_button(client, published_rounds, cast):
    client.force_login(cast["staff"])
    assert f"python manage.py import_round {EMPTY}" in row(client.get("/").content.decode(), EMPTY)
    page = client.get(f"/r/{EMPTY}/").content.decode()
    assert f"python manage.py import_round {EMPTY}" in page
    assert f'action="/submissions/rounds/{EMPTY}/import/"' in page
    client.force_login(cast["member_a"])
    assert "import_round" not in client.get(f"/r/{EMPTY}/").content.decode()


def test_a_round_being_imported_says_how_far_it_is(client, published_rounds, cast):
    round_ = published_rounds[EMPTY]
    job = RoundImport.objects.create(
        round=round_, state=RoundImport.State.FETCHING, done=3, total=13, received_bytes=42_000_000
    )
    expected = "Being imported: fetching 3 of 13 submitters, 42 MB received"
    assert expected in row(client.get("/").content.decode(), EMPTY)
    assert expected in client.get(f"/r/{EMPTY}/").content.decode()

    # Handed over: the workers' progress is the round's submissions'.
    job.state = RoundImport.State.CHECKING
    job.save()
    checked = make.submission(round_)
    pending = make.submission(round_)
    Submission.objects.filter(pk=pending.pk).update(status=Submission.Status.CHECKING)
    assert "checking, 1 of 2 submitters done" in row(client.get("/").content.decode(), EMPTY)
    Submission.objects.filter(pk__in=[checked.pk, pending.pk]).update(
        status=Submission.Status.PUBLISHED
    )
    assert "Not imported here" in row(client.get("/").content.decode(), EMPTY)

    job.state, job.error, job.finished_at = (
        RoundImport.State.FAILED,
        "git fetch failed",
        timezone.now(),
    )
    job.save()
    assert "git fetch failed" not in client.get(f"/r/{EMPTY}/").content.decode()  # staff's
    client.force_login(cast["staff"])
    assert "The last import failed" in client.get(f"/r/{EMPTY}/").content.decode()


def test_only_staff_start_an_import_and_only_one_at_a_time(client, published_rounds, cast):
    url = f"/submissions/rounds/{EMPTY}/import/"
    assert client.post(url).status_code == 302 and not RoundImport.objects.exists()  # to sign in
    client.force_login(cast["member_a"])
    assert client.post(url).status_code == 403 and not RoundImport.objects.exists()
    client.force_login(cast["staff"])
    page = client.post(url, follow=True).content.decode()
    assert "queued for import from " + REPOSITORY in page
    assert RoundImport.objects.get().state == RoundImport.State.QUEUED
    assert "Being imported: queued, waiting for a worker" in page
    again = client.post(url, follow=True).content.decode()
    assert "is being imported already" in again
