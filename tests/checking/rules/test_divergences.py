"""The portal's rules that depart from mlperf-logging (issue 25, item 7): one list, in the code and in
docs/divergences.md, each a rule the checks make, shown to reviewers on the submission page."""

import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from leaderboard.catalogue import rule_catalogue
from submissions.checking.rules.mlperf.divergences import DIVERGENCES, present
from submissions.models import Finding, Submission

from ...bundles import bundle_bytes
from ...conftest import ROOT

DOC = ROOT / "docs" / "divergences.md"


def test_the_doc_lists_exactly_the_divergences_of_the_code():
    rows = re.findall(r"^\| `([a-z0-9.-]+)` \| (.+?) \| (.+?) \|$", DOC.read_text(), re.MULTILINE)
    assert [rule for rule, _, _ in rows] == list(DIVERGENCES)
    for rule, portal, why in rows:
        assert (portal, why) == (DIVERGENCES[rule].portal, DIVERGENCES[rule].why)


def test_each_divergence_is_a_rule_the_checks_make():
    """A rule of the catalogue that a module of submissions/checking names, by its constant."""
    source = "\n".join(
        p.read_text()
        for p in (ROOT / "submissions" / "checking").rglob("*.py")
        if p.name != "divergences.py"
    )
    for rule in DIVERGENCES:
        constant = re.sub(r"[.-]", "_", rule).upper()
        assert rule in rule_catalogue.CATALOGUE, rule
        assert re.search(rf"\brule_catalogue\.{constant}\b", source), (
            f"{rule} is not a rule id of submissions/checking"
        )


def test_present_counts_the_findings_of_each_divergence_in_the_lists_order():
    found = present(
        ["run.clock-backwards", "run.no-run-stop", "run.clock-backwards", "mlperf.compliance"]
    )
    assert [(d.rule, n) for d, n in found] == [("run.clock-backwards", 2), ("mlperf.compliance", 1)]
    assert present(["run.no-run-stop"]) == []


@pytest.mark.usefixtures("eager")
@pytest.mark.django_db(transaction=True)  # eager tasks run in on_commit hooks
def test_the_submission_page_shows_reviewers_the_divergences_of_its_findings(
    client, rounds, cast, tmp_path
):
    client.force_login(cast["member_a"])
    client.post(
        "/submissions/upload/",
        {
            "round": "training-v5.1",
            "bundle": SimpleUploadedFile("acme.tgz", bundle_bytes(tmp_path)),
        },
    )
    submission = Submission.objects.get()
    page = client.get(f"/submissions/{submission.uid}/").content.decode()
    assert 'id="divergences"' not in page  # none of its findings is a divergence

    validation = submission.validations.get()
    for line in (10, 20):
        Finding.objects.create(
            validation=validation,
            severity="warning",
            rule="run.clock-backwards",
            file="Acme/results/alpha/retinanet/result_0.txt",
            line=line,
            message="m",
        )
    page = client.get(f"/submissions/{submission.uid}/").content.decode()
    section = page[page.index('id="divergences"') :]
    assert "<code>run.clock-backwards</code></td><td>2</td>" in section
    assert DIVERGENCES["run.clock-backwards"].why.split(" (")[0] in section
    assert "run.record-after-stop" not in section  # only the rules the findings carry
