"""A submission's report: its latest verdict and every finding, for the page, JSON and the command line."""

from collections import Counter

from submissions.models import Finding, Submission, Validation


def findings_of(validation: Validation) -> list[Finding]:
    return list(validation.findings.all())


def latest_done(submission: Submission) -> Validation | None:
    return submission.validations.filter(status=Validation.Status.DONE).first()


def severity_counts(findings) -> dict[str, int]:
    counts = Counter(f.severity for f in findings)
    return {s: counts.get(s, 0) for s in ("error", "warning", "info")}


def report_dict(submission: Submission) -> dict:
    validation = latest_done(submission)
    findings = findings_of(validation) if validation else []
    return {
        "submission": str(submission.uid),
        "round": submission.round.key,
        "submitter": submission.submitter.name if submission.submitter else None,
        "status": submission.status,
        "message": submission.message,
        "validation": validation.number if validation else None,
        "counts": severity_counts(findings),
        "findings": [f.as_dict() for f in findings],
    }


def report_text(submission: Submission) -> str:
    data = report_dict(submission)
    counts = data["counts"]
    lines = [
        f"Submission {data['submission']} ({data['round']}, {data['submitter'] or 'submitter unknown'}): {data['status']}",
        f"{counts['error']} errors, {counts['warning']} warnings, {counts['info']} info"
        + (f" (validation {data['validation']})" if data["validation"] else " (not validated yet)"),
    ]
    if data["message"]:
        lines.append(data["message"])
    for f in data["findings"]:
        where = f["file"] + (f":{f['line']}" if f["line"] else "")
        lines.append(f"{f['severity'].upper():7} {f['rule']:32} {where}")
        lines.append(f"        {f['message']}")
        if f["hint"]:
            lines.append(f"        hint: {f['hint']}")
    return "\n".join(lines)


def findings_by_result(result_ids: list[int]) -> dict[int, list[dict]]:
    """The latest finished validation's findings of each result, for the public result page (one query)."""
    rows = (
        Finding.objects.filter(result_id__in=result_ids, validation__status=Validation.Status.DONE)
        .select_related("validation")
        .order_by("result_id", "-validation__number", "file", "line")
    )
    latest: dict[int, int] = {}
    out: dict[int, list[dict]] = {}
    for finding in rows:
        number = latest.setdefault(finding.result_id, finding.validation.number)
        if finding.validation.number == number:
            out.setdefault(finding.result_id, []).append(finding.as_dict())
    return out
