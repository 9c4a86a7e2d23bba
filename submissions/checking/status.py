"""A submission's progress as fixed steps: received, unpacked, checked (N of M runs), scored, reference checks.

Each step is pending, running, waiting (with the reason), done, failed (with the reason) or skipped. `steps`
decides them from plain facts (no database; the words in the request's language), so the page, progress.json, the API and portal-submit all say the
same; `steps_of` reads the facts of a Submission, its reference checks' included (refchecks/: the latest
check of each result).
"""

from dataclasses import asdict, dataclass

from django.utils.translation import gettext, ngettext
from django.utils.translation import gettext_lazy as _

from leaderboard.models import Result
from submissions.refchecks.jobs import online_queues, state_label
from submissions.refchecks.models import ReferenceCheck

from .bundles.limits import size_text
from .pipeline import held_results
from .reports import latest_done

CODES = ("received", "unpacked", "checked", "scored", "reference")
LABELS = {
    "received": _("Received"),
    "unpacked": _("Unpacked"),
    "checked": _("Runs checked"),
    "scored": _("Scored"),
    "reference": _("Reference checks"),
}
# Each state in words, for the page (the API and progress.json give the code).
STATE_WORDS = {
    "pending": _("pending"),
    "running": _("running"),
    "waiting": _("waiting"),
    "done": _("done"),
    "failed": _("failed"),
    "skipped": _("skipped"),
}


@dataclass(frozen=True)
class Step:
    code: str
    label: str
    state: str  # pending, running, waiting, done, failed, skipped
    detail: str = ""

    def as_dict(self) -> dict:
        return asdict(self)

    @property
    def state_label(self) -> str:
        """The state in the page's language (the API and progress.json give `state`, a code)."""
        return str(STATE_WORDS.get(self.state, self.state))


@dataclass(frozen=True)
class Facts:
    status: str  # Submission.Status
    runs_total: int = 0
    runs_checked: int = 0
    message: str = ""
    queue_pending: bool = False
    validated: bool = False  # a validation has finished
    errors: int = 0  # blocking findings of the last finished validation
    results: int = 0
    held: int = 0
    received: str = ""  # e.g. "12.0 MB at 2026-11-26 15:02 UTC"
    reference: tuple[str, str] | None = None  # (state, detail) from the provider


def _errors(n: int) -> str:
    return ngettext("%(n)s error", "%(n)s errors", n) % {"n": f"{n:,}"}


def steps(f: Facts) -> list[Step]:
    """Each step's state, and why it failed or waits."""
    states = dict.fromkeys(CODES, "pending")
    details = dict.fromkeys(CODES, "")
    states["received"], details["received"] = "done", f.received
    order = {"received": 0, "ingesting": 1, "checking": 2, "finalizing": 3}
    reached = order.get(f.status, 4)  # final statuses: every step of the pipeline was reached

    if f.status == "received":
        if f.queue_pending:
            states["unpacked"], details["unpacked"] = "waiting", f.message
        else:
            states["unpacked"], details["unpacked"] = (
                "waiting",
                gettext("Waiting for a worker to take it."),
            )
    elif f.status == "ingesting":
        states["unpacked"] = "running"
    else:
        states["unpacked"] = "done"
        if f.runs_total:
            details["unpacked"] = ngettext(
                "%(n)s run log found.", "%(n)s run logs found.", f.runs_total
            ) % {"n": f"{f.runs_total:,}"}

    counted = gettext("checked %(checked)s of %(total)s runs") % {
        "checked": f"{f.runs_checked:,}",
        "total": f"{f.runs_total:,}",
    }
    if f.status == "checking":
        states["checked"], details["checked"] = "running", counted
    elif reached > 2 and f.status != "failed":
        states["checked"], details["checked"] = "done", counted
    if f.status == "finalizing":
        states["scored"] = "running"

    if f.status == "failed":
        # The step it failed at: before any run was known it was unpacking; with runs, checking or scoring.
        if not f.runs_total:
            at = "unpacked"
        elif f.runs_checked < f.runs_total:
            at = "checked"
            states["unpacked"] = "done"
        else:
            at = "scored"
            states["unpacked"] = states["checked"] = "done"
            details["checked"] = counted
        states[at], details[at] = "failed", f.message or gettext("Failed.")
        for later in CODES[CODES.index(at) + 1 :]:
            states[later], details[later] = (
                "skipped",
                gettext("Not reached: an earlier step failed."),
            )
    elif reached == 4 and f.status != "withdrawn" or f.validated and f.status == "withdrawn":
        states["scored"] = "done"
        numbers = {
            "held": f"{f.held:,}",
            "results": f"{f.results:,}",
            "errors": _errors(f.errors),
        }
        if f.held:
            details["scored"] = (
                gettext(
                    "%(held)s of %(results)s results held by a blocking finding (%(errors)s in "
                    "all); the others can be published."
                )
                % numbers
            )
        elif f.errors:
            details["scored"] = (
                gettext(
                    "%(results)s of %(results)s results can be published (%(errors)s, none blocking)."
                )
                % numbers
            )
        else:
            details["scored"] = (
                gettext("%(results)s of %(results)s results can be published.") % numbers
            )
    if f.status == "withdrawn":
        for code in CODES[1:]:
            if states[code] in ("pending", "running", "waiting"):
                states[code], details[code] = "skipped", gettext("Withdrawn.")

    if states["scored"] == "done":
        states["reference"], details["reference"] = f.reference or reference_step([])
    return [Step(code, str(LABELS[code]), states[code], details[code]) for code in CODES]


@dataclass(frozen=True)
class Check:
    """What the reference step needs of one reference check (the latest of each result)."""

    state: str  # queued, running, done, failed
    label: str  # the state in words: "waiting for an agent with H100", "running on gpu-7"
    waiting: bool = False  # queued where no agent takes it
    verdict: str = ""  # in words
    message: str = ""


def reference_step(checks: list[Check]) -> tuple[str, str]:
    """The reference step's (state, detail) from its checks."""
    if not checks:
        return (
            "skipped",
            gettext(
                "No reference check is run for this submission (open division or imported history)."
            ),
        )
    done = [c for c in checks if c.state in ("done", "failed")]
    count = gettext("%(done)s of %(total)s reference checks done") % {
        "done": len(done),
        "total": len(checks),
    }
    failed = [c for c in checks if c.state == "failed"]
    open_ = [c for c in checks if c.state not in ("done", "failed")]
    if open_:
        waiting = sorted({c.label for c in open_ if c.waiting})
        if waiting:
            return "waiting", gettext("%(count)s; %(open)s open: %(which)s.") % {
                "count": count,
                "open": len(open_),
                "which": "; ".join(waiting),
            }
        return "running", f"{count}; {', '.join(sorted({c.label for c in open_}))}."
    if failed:
        return "failed", gettext("%(count)s; %(failed)s could not run: %(why)s") % {
            "count": count,
            "failed": len(failed),
            "why": "; ".join(sorted({c.message or c.label for c in failed})),
        }
    verdicts: dict[str, int] = {}
    for c in done:
        verdict = c.verdict or gettext("no verdict")
        verdicts[verdict] = verdicts.get(verdict, 0) + 1
    return "done", f"{count}: " + ", ".join(
        f"{n} {v.lower()}" for v, n in sorted(verdicts.items())
    ) + gettext(".")


def _checks_of(submission) -> list[Check]:
    latest: dict[int, ReferenceCheck] = {}
    for check in ReferenceCheck.objects.filter(result__system__submission=submission).order_by(
        "result_id", "-created_at", "-pk"
    ):
        latest.setdefault(check.result_id, check)
    if not latest:
        return []
    queues = online_queues()
    return [
        Check(
            c.state,
            state_label(c, queues),
            waiting=c.state == ReferenceCheck.State.QUEUED and c.queue not in queues,
            verdict=c.get_verdict_display() if c.verdict else "",
            message=c.message,
        )
        for c in latest.values()
    ]


def facts_of(submission) -> Facts:
    validation = latest_done(submission)
    results = 0
    held = []
    if validation is not None:
        results = Result.objects.filter(system__submission=submission).count()
        held = held_results(submission)
    reference = reference_step(_checks_of(submission)) if validation is not None else None
    return Facts(
        status=submission.status,
        runs_total=submission.runs_total,
        runs_checked=submission.runs_checked,
        message=submission.message,
        queue_pending=submission.queue_pending,
        validated=validation is not None,
        errors=validation.errors if validation else 0,
        results=results,
        held=len(held),
        received=gettext("%(size)s at %(when)s UTC")
        % {
            "size": size_text(submission.size),
            "when": f"{submission.created_at:%Y-%m-%d %H:%M:%S}",
        },
        reference=reference,
    )


def steps_of(submission) -> list[Step]:
    return steps(facts_of(submission))
