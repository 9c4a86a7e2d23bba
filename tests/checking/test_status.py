"""A submission's steps (submissions/checking/status.py), from plain facts: what each step says, and why it fails or waits."""

from submissions.checking.status import Check, Facts, reference_step, steps


def states(facts: Facts) -> dict[str, tuple[str, str]]:
    return {step.code: (step.state, step.detail) for step in steps(facts)}


def test_a_new_upload_is_received_and_waits_for_a_worker():
    s = states(Facts("received", received="1.0 MB at 2026-11-26 15:00:00 UTC"))
    assert s["received"] == ("done", "1.0 MB at 2026-11-26 15:00:00 UTC")
    assert s["unpacked"] == ("waiting", "Waiting for a worker to take it.")
    assert [s[c][0] for c in ("checked", "scored", "reference")] == ["pending"] * 3


def test_an_upload_while_the_queue_is_down_waits_with_the_reason():
    s = states(
        Facts("received", queue_pending=True, message="Queued: the task queue is not answering.")
    )
    assert s["unpacked"] == ("waiting", "Queued: the task queue is not answering.")


def test_checking_counts_the_runs():
    s = states(Facts("checking", runs_total=10, runs_checked=3))
    assert s["unpacked"] == ("done", "10 run logs found.")
    assert s["checked"] == ("running", "checked 3 of 10 runs")
    assert s["scored"][0] == "pending"


def test_a_bundle_that_cannot_be_opened_fails_at_unpacking_with_the_reason_and_skips_the_rest():
    s = states(Facts("failed", message="Not a tar or zip archive."))
    assert s["unpacked"] == ("failed", "Not a tar or zip archive.")
    assert {s[c][0] for c in ("checked", "scored", "reference")} == {"skipped"}


def test_a_failure_while_checking_fails_that_step():
    s = states(Facts("failed", runs_total=10, runs_checked=4, message="A worker kept dying."))
    assert s["unpacked"][0] == "done" and s["checked"] == ("failed", "A worker kept dying.")


def test_a_scored_submission_says_how_many_results_are_held():
    s = states(
        Facts("invalid", runs_total=5, runs_checked=5, validated=True, errors=2, results=3, held=1)
    )
    assert s["checked"] == ("done", "checked 5 of 5 runs")
    assert s["scored"][0] == "done" and s["scored"][1].startswith("1 of 3 results held")
    assert s["reference"][0] == "skipped"


def test_reference_checks_say_what_their_provider_says():
    s = states(
        Facts(
            "valid",
            runs_total=5,
            runs_checked=5,
            validated=True,
            results=1,
            reference=("waiting", "No agent for H100."),
        )
    )
    assert s["scored"][1].startswith("1 of 1 results can be published")
    assert s["reference"] == ("waiting", "No agent for H100.")


def test_a_withdrawn_submission_skips_what_it_had_not_reached():
    s = states(Facts("withdrawn", runs_total=5, runs_checked=2))
    assert s["received"][0] == "done"
    assert s["scored"] == ("skipped", "Withdrawn.")


def test_reference_checks_waiting_for_an_agent_say_which():
    state, detail = reference_step(
        [
            Check("done", "done", verdict="Consistent"),
            Check("queued", "waiting for an agent with H100", waiting=True),
        ]
    )
    assert state == "waiting"
    assert detail == "1 of 2 reference checks done; 1 open: waiting for an agent with H100."


def test_reference_checks_that_could_not_run_fail_the_step_with_why():
    state, detail = reference_step(
        [
            Check("done", "done", verdict="Consistent"),
            Check("failed", "failed", message="Out of memory."),
        ]
    )
    assert (state, detail) == (
        "failed",
        "2 of 2 reference checks done; 1 could not run: Out of memory.",
    )


def test_finished_reference_checks_count_their_verdicts():
    checks = [Check("done", "done", verdict="Consistent")] * 2 + [
        Check("done", "done", verdict="Implausibly fast")
    ]
    assert reference_step(checks) == (
        "done",
        "3 of 3 reference checks done: 2 consistent, 1 implausibly fast.",
    )
