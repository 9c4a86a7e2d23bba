"""A round's calendar from its round file's [calendar] table; staff edits in the admin win over the file."""

from datetime import UTC, date, datetime

import pytest

from leaderboard.catalogue.rounds import load_round, read_calendar
from leaderboard.models import Round

DEADLINE = datetime(2025, 5, 2, 17, 0, tzinfo=UTC)


def round_data(**calendar):
    data = {
        "key": "training-v9.0",
        "name": "Training v9.0",
        "ruleset": "5.1.0",
        "log_format": "mllog",
        "benchmarks": [{"key": "bert", "name": "BERT", "required_runs": 10}],
    }
    if calendar:
        data["calendar"] = calendar
    return data


def test_the_calendar_table_is_read_with_its_offsets():
    fields = read_calendar(
        {"calendar": {"deadline_at": DEADLINE, "grace_minutes": 30}}, "training-v9.0.toml"
    )
    assert fields == {"deadline_at": DEADLINE, "grace_minutes": 30}


@pytest.mark.parametrize(
    "table, words",
    [
        ({"deadline_at": date(2025, 5, 2)}, "calendar.deadline_at is a date alone"),
        ({"deadline_at": datetime(2025, 5, 2, 17)}, "with its offset"),
        ({"grace_minutes": -1}, "grace_minutes must be a whole number"),
        ({"deadline": DEADLINE}, "unknown keys deadline"),
    ],
)
def test_a_calendar_that_leaves_the_minute_uncertain_is_refused(table, words):
    with pytest.raises(ValueError, match=words):
        read_calendar({"calendar": table}, "training-v9.0.toml")


@pytest.mark.django_db
def test_loading_again_keeps_what_staff_edited_and_follows_the_file_elsewhere():
    load_round(round_data(deadline_at=DEADLINE, publish_at=datetime(2025, 6, 4, tzinfo=UTC)))
    moved = datetime(2025, 5, 9, 17, 0, tzinfo=UTC)
    Round.objects.filter(key="training-v9.0").update(
        deadline_at=moved, calendar_edited=["deadline_at"]
    )
    round_ = load_round(round_data(deadline_at=DEADLINE))  # publish_at taken out of the file
    assert round_.deadline_at == moved and round_.publish_at is None


@pytest.mark.django_db
def test_the_shipped_history_rounds_have_no_calendar(rounds):
    assert all(r.phase(datetime.now(UTC)) == "history" for r in rounds.values())


@pytest.mark.django_db
def test_staff_edit_the_calendar_and_reviewers_in_the_admin_audited(client, rounds, cast):
    from audit.models import AuditEvent

    cast["staff"].is_superuser = True
    cast["staff"].save()
    client.force_login(cast["staff"])
    url = f"/admin/leaderboard/round/{rounds['training-v5.1'].pk}/change/"
    form = client.get(url).context["adminform"].form
    data = {k: v for k, v in form.initial.items() if v is not None and not isinstance(v, list)}
    data.update(
        {
            "deadline_at_0": "2025-05-02",
            "deadline_at_1": "17:00:00",
            "grace_minutes": "30",
            "reviewers": [cast["reviewer"].pk],
            "blocking_rules": "[]",
            "benchmarks-TOTAL_FORMS": "0",
            "benchmarks-INITIAL_FORMS": "0",
            "prices-TOTAL_FORMS": "0",
            "prices-INITIAL_FORMS": "0",
        }
    )
    response = client.post(url, data)
    assert response.status_code == 302, response.context["adminform"].form.errors
    round_ = Round.objects.get(key="training-v5.1")
    assert round_.deadline_at == DEADLINE and round_.grace_minutes == 30
    assert sorted(round_.calendar_edited) == ["deadline_at", "grace_minutes"]
    assert list(round_.reviewers.all()) == [cast["reviewer"]]
    changed = AuditEvent.objects.get(action="round.calendar_changed")
    assert changed.actor == cast["staff"] and set(changed.details["changes"]) == {
        "deadline_at",
        "grace_minutes",
    }
    assert AuditEvent.objects.get(action="round.reviewers_changed").details["added"] == ["reviewer"]
