"""Hostile bundles, written by the tests: each ends with a finding or a refusal under its own rule, never as an
`internal` failure, and nothing that is not finite reaches the database."""

import io
import json
import re
import tarfile
import zipfile

import pytest
from django.core.management import call_command

from leaderboard.models import Result, Run, System
from submissions.checking.bundles.layout import read_scaling_factor
from submissions.checking.pipeline import checks
from submissions.checking.rules import RunContext, check_run
from submissions.checking.safejson import storable
from submissions.checking.systems import MAX_COUNT, fields_of, read_count
from submissions.models import Finding, Submission
from submissions.synthetic.bundles import SystemSpec, write_bundle

pytestmark = pytest.mark.usefixtures("eager")

TARGETS = {"rgat": 0.72}
DEEP = 10_000


def ingest(path):
    try:
        call_command("ingest", str(path), "--round", "training-v5.1", "--wait")
    except (
        Exception
    ):  # --wait exits non-zero for an invalid submission: its findings are what is tested
        pass
    return Submission.objects.order_by("-pk").first()


def acme(tmp_path, runs=3):
    return write_bundle(
        tmp_path / "src", "Acme", [SystemSpec("alpha", results={"rgat": [10.0] * runs})], TARGETS
    )


def plain_tar(archive, members):
    """A plain tar (read in place) of (name, bytes) members."""
    with tarfile.open(archive, "w", format=tarfile.PAX_FORMAT) as tar:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return archive


def members_of(root, rename=lambda name: name):
    return [
        (rename(f"{root.name}/{p.relative_to(root)}"), p.read_bytes())
        for p in sorted(root.rglob("*"))
        if p.is_file()
    ]


def findings(submission, rule):
    return list(Finding.objects.filter(validation__submission=submission, rule=rule))


def assert_checked(submission):
    """Final, not failed, and no finding of the portal's own faults."""
    assert submission.status in (Submission.Status.VALID, Submission.Status.INVALID), (
        submission.status,
        submission.message,
    )
    rules = set(
        Finding.objects.filter(validation__submission=submission).values_list("rule", flat=True)
    )
    assert not {r for r in rules if r.startswith("internal") or r == "run.check-crashed"}, rules


def assert_refused(submission, rule, *words):
    assert submission.status == Submission.Status.FAILED and submission.rule == rule, (
        submission.message
    )
    for word in words:
        assert word in submission.message


@pytest.mark.django_db(transaction=True)  # eager tasks run in on_commit hooks
def test_a_system_file_nested_ten_thousand_deep_is_an_error_on_that_file(rounds, tmp_path):
    root = acme(tmp_path)
    (root / "systems" / "alpha.json").write_text('{"a": ' * DEEP + "1" + "}" * DEEP)
    submission = ingest(root)
    assert_checked(submission)
    [finding] = findings(submission, "bundle.json-too-deep")
    assert (finding.severity, finding.file, finding.system_key) == (
        "error",
        "Acme/systems/alpha.json",
        "alpha",
    )
    assert "more than 16 levels deep" in finding.message
    assert System.objects.get(submission=submission).description == {}


@pytest.mark.django_db(transaction=True)  # eager tasks run in on_commit hooks
def test_a_scaling_json_nested_ten_thousand_deep_is_an_error_on_its_result(rounds, tmp_path):
    root = acme(tmp_path)
    (root / "results" / "alpha" / "rgat" / "scaling.json").write_text("[" * DEEP + "]" * DEEP)
    submission = ingest(root)
    assert_checked(submission)
    [finding] = findings(submission, "bundle.json-too-deep")
    assert finding.file == "Acme/results/alpha/rgat/scaling.json"
    assert finding.result == Result.objects.get(system__submission=submission)
    assert finding.result.claimed_scaling_factor is None


@pytest.mark.parametrize("factor", ["NaN", "Infinity", "-1", "0", "true", '"1.5"', "1" + "0" * 400])
def test_a_scaling_factor_that_is_no_positive_number_is_not_kept(factor):
    problems, notes = [], []
    assert (
        read_scaling_factor(
            f'{{"scaling_factor": {factor}}}'.encode(), "A/r/scaling.json", notes, problems
        )
        is None
    )
    [problem] = problems
    assert (problem.rule, problem.file, problem.severity) == (
        "bundle.scaling-factor",
        "A/r/scaling.json",
        "warning",
    )
    assert read_scaling_factor(b'{"scaling_factor": 1.07}', "s.json", notes, problems) == 1.07


@pytest.mark.django_db(transaction=True)  # eager tasks run in on_commit hooks
def test_a_folder_chain_two_thousand_deep_is_refused_with_its_rule(rounds, tmp_path):
    deep = "Acme/" + "d/" * 2000 + "x.txt"
    archive = plain_tar(tmp_path / "b.tar", [*members_of(acme(tmp_path)), (deep, b"x")])
    assert_refused(ingest(archive), "bundle.path-too-deep", "2002 folders deep", "up to 64")


@pytest.mark.django_db(transaction=True)  # eager tasks run in on_commit hooks
def test_a_folder_chain_too_deep_is_refused_when_unpacked_too(rounds, tmp_path):
    archive = tmp_path / "b.tgz"
    with tarfile.open(archive, "w:gz") as tar:
        for name, data in [*members_of(acme(tmp_path)), ("Acme/" + "d/" * 70 + "x.txt", b"x")]:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    assert_refused(ingest(archive), "bundle.path-too-deep", "72 folders deep")


@pytest.mark.parametrize(
    "value, shown, why",
    [
        ("NaN", "'NaN'", "not a finite number"),
        ("Infinity", "'Infinity'", "not a finite number"),  # stored as text
        ("-1", "-1", "negative"),
        ("1e300", "1" + "0" * 79 + "…", "more than 1,000,000"),  # jsonb writes it out
        ("123456789012345678901234567890", "123456789012345678901234567890", "more than 1,000,000"),
        ('"1e300"', "'1e300'", "more than 1,000,000"),
        ('"eight"', "'eight'", "no number"),
        ("2.5", "2.5", "not a whole number"),
    ],
)
@pytest.mark.django_db(transaction=True)  # eager tasks run in on_commit hooks
def test_a_node_count_that_is_no_count_is_an_error_naming_file_key_and_value(
    rounds, tmp_path, value, shown, why
):
    root = acme(tmp_path)
    path = root / "systems" / "alpha.json"
    path.write_text(
        path.read_text().replace('"number_of_nodes": "1"', f'"number_of_nodes": {value}')
    )
    submission = ingest(root)
    assert_checked(submission)
    [finding] = findings(submission, "system.number")
    assert (finding.severity, finding.file) == ("error", "Acme/systems/alpha.json")
    assert f"'number_of_nodes' is {shown}: {why}" in finding.message
    system = System.objects.get(submission=submission)
    assert (system.nodes, system.accelerator_count, system.processor_count) == (None, None, None)


@pytest.mark.django_db(transaction=True)  # eager tasks run in on_commit hooks
def test_counts_whose_product_passes_the_limit_are_an_error_and_not_stored(rounds, tmp_path):
    root = acme(tmp_path)
    path = root / "systems" / "alpha.json"
    text = path.read_text().replace('"number_of_nodes": "1"', '"number_of_nodes": "100000"')
    path.write_text(
        text.replace('"accelerators_per_node": "8"', '"accelerators_per_node": "100000"')
    )
    submission = ingest(root)
    assert_checked(submission)
    [finding] = findings(submission, "system.number")
    assert (
        "number_of_nodes × accelerators_per_node" in finding.message
        and "10000000000" in finding.message
    )
    system = System.objects.get(submission=submission)
    assert (system.nodes, system.accelerator_count, system.processor_count) == (
        100_000,
        None,
        200_000,
    )


@pytest.mark.parametrize(
    "value, count, why",
    [
        (8, 8, ""),
        ("16", 16, ""),
        (" 2x ", 2, ""),
        (8.0, 8, ""),
        ("N/A", None, ""),
        (None, None, ""),
        (True, None, "a bool, not a count"),
        ([8], None, "a list, not a count"),
        (float("nan"), None, "not a finite number"),
        ("9" * 5000, None, "more than 1,000,000"),
        ("-0", 0, ""),
        (MAX_COUNT + 1, None, "more than 1,000,000"),
    ],
)
def test_read_count(value, count, why):
    assert read_count(value) == (count, why)


def test_long_description_texts_are_cut_to_the_tables_columns():
    problems = []
    fields = fields_of(
        {"system_name": "x" * 1000, "accelerator_model_name": "GPU"}, "system.json", problems
    )
    assert (
        len(fields["name"]) == 300
        and fields["name"].endswith("…")
        and fields["accelerator_model"] == "GPU"
    )
    assert [(p.rule, p.where) for p in problems] == [("system.long-text", "name")]


@pytest.mark.django_db(transaction=True)  # eager tasks run in on_commit hooks
def test_a_run_index_of_23_digits_is_read_as_the_next_run_and_said(rounds, tmp_path):
    root = acme(tmp_path)
    folder = root / "results" / "alpha" / "rgat"
    name = f"result_{'9' * 23}.txt"
    (folder / "result_2.txt").rename(folder / name)
    submission = ingest(root)
    assert_checked(submission)
    assert sorted(
        Run.objects.filter(result__system__submission=submission).values_list("index", flat=True)
    ) == [0, 1, 2]
    [finding] = findings(submission, "bundle.run-index")
    assert finding.file == f"Acme/results/alpha/rgat/{name}" and finding.run.index == 2
    assert "23 digits" in finding.message and "result_2.txt" in finding.hint


@pytest.mark.django_db(transaction=True)  # eager tasks run in on_commit hooks
def test_a_system_folder_name_too_long_for_the_tables_is_refused(rounds, tmp_path):
    long = "s" * 250  # a name file systems take, longer than the 200 characters of a system's key
    members = members_of(acme(tmp_path), lambda name: name.replace("alpha", long))
    assert_refused(
        ingest(plain_tar(tmp_path / "b.tar", members)), "bundle.name-too-long", "250 characters"
    )


@pytest.mark.django_db(transaction=True)  # eager tasks run in on_commit hooks
def test_a_name_longer_than_file_systems_take_is_refused(rounds, tmp_path):
    members = [*members_of(acme(tmp_path)), ("Acme/" + "n" * 300 + ".txt", b"x")]
    assert_refused(
        ingest(plain_tar(tmp_path / "b.tar", members)), "bundle.name-too-long", "304 bytes"
    )


@pytest.mark.django_db(transaction=True)  # eager tasks run in on_commit hooks
def test_a_path_longer_than_the_tables_keep_is_refused(rounds, tmp_path):
    members = [*members_of(acme(tmp_path)), ("Acme/" + "/".join(["p" * 100] * 5) + "/x.txt", b"x")]
    assert_refused(
        ingest(plain_tar(tmp_path / "b.tar", members)), "bundle.path-too-long", "up to 500"
    )


@pytest.mark.django_db(transaction=True)  # eager tasks run in on_commit hooks
def test_a_submitter_name_too_long_is_refused(rounds, tmp_path):
    members = members_of(acme(tmp_path), lambda name: name.replace("Acme/", "A" * 220 + "/", 1))
    assert_refused(
        ingest(plain_tar(tmp_path / "b.tar", members)), "bundle.name-too-long", "220 characters"
    )


@pytest.mark.django_db(transaction=True)  # eager tasks run in on_commit hooks
def test_a_number_json_will_not_read_is_an_error_on_the_description(rounds, tmp_path):
    root = acme(tmp_path)
    path = root / "systems" / "alpha.json"
    path.write_text(
        path.read_text().replace('"number_of_nodes": "1"', f'"number_of_nodes": {"9" * 5000}')
    )
    submission = ingest(root)
    assert_checked(submission)
    [finding] = findings(submission, "bundle.json-number")
    assert finding.file == "Acme/systems/alpha.json" and "4300 digits" in finding.message


@pytest.mark.django_db(transaction=True)  # eager tasks run in on_commit hooks
def test_non_finite_and_deep_hyperparameters_are_stored_as_text_with_a_warning(rounds, tmp_path):
    root = acme(tmp_path)
    log = root / "results" / "alpha" / "rgat" / "result_0.txt"
    text = re.sub(r'("key": "global_batch_size", "value": )\d+', r"\1Infinity", log.read_text())
    deep = "[" * 100 + "]" * 100
    log.write_text(re.sub(r'("key": "opt_name", "value": )"\w+"', rf"\1{deep}", text))
    submission = ingest(root)
    assert_checked(submission)
    run = Run.objects.get(path__endswith="rgat/result_0.txt")
    assert run.hyperparameters["global_batch_size"] == "Infinity"
    depth, value = 0, run.hyperparameters["opt_name"]
    while isinstance(value, list):
        depth, value = depth + 1, value[0]
    assert depth < 32 and value == "(left out: nested too deep)"
    [finding] = findings(submission, "run.stored-as-text")
    assert finding.run == run and finding.severity == "warning"
    assert (
        "global_batch_size is Infinity" in finding.message and "nested too deep" in finding.message
    )


def test_storable_makes_strict_json_of_anything_json_reads():
    value = {"a": [float("nan"), float("inf"), -float("inf"), 1.5], "b": (1, 2)}
    stored, changes = storable(value)
    assert (
        json.dumps(stored, allow_nan=False)
        == '{"a": ["NaN", "Infinity", "-Infinity", 1.5], "b": [1, 2]}'
    )
    assert changes == [("a[0]", "NaN"), ("a[1]", "Infinity"), ("a[2]", "-Infinity")]


@pytest.mark.django_db(transaction=True)  # eager tasks run in on_commit hooks
def test_a_crash_in_the_run_checks_is_an_error_on_that_run_not_a_failed_submission(
    rounds, tmp_path, monkeypatch
):
    def crash(path, rel_path, ctx):
        if rel_path.endswith("result_1.txt"):
            raise ZeroDivisionError("a bug")
        return check_run(path, rel_path, ctx)

    monkeypatch.setattr(
        checks.rules, "check_run", crash
    )  # a fault of ours, stood in by a function that raises
    submission = ingest(acme(tmp_path))
    assert submission.status == Submission.Status.INVALID, submission.message
    [finding] = findings(submission, "run.check-crashed")
    assert finding.run.path.endswith("result_1.txt") and finding.severity == "error"
    assert "ZeroDivisionError: a bug" in finding.message and "report it" in finding.hint
    assert Run.objects.filter(result__system__submission=submission, checked=True).count() == 3


@pytest.mark.django_db(transaction=True)  # eager tasks run in on_commit hooks
def test_a_crash_reading_a_description_is_an_error_on_that_file(rounds, tmp_path, monkeypatch):
    from submissions.checking.bundles import layout

    def crash(raw, rel, notes, problems=None):
        raise KeyError("a bug")

    monkeypatch.setattr(layout, "read_description", crash)
    submission = ingest(acme(tmp_path))
    assert submission.status == Submission.Status.INVALID, submission.message
    [finding] = findings(submission, "internal.read")
    assert finding.file == "Acme/systems/alpha.json" and "KeyError" in finding.message
    assert System.objects.get(submission=submission).description == {}


def test_a_log_whose_clock_is_not_finite_gives_fields_strict_json_takes(tmp_path):
    path = tmp_path / "result_0.txt"
    path.write_text(
        ':::MLLOG {"time_ms": 1e999, "key": "run_start", "value": null, "metadata": {}}\n'
    )
    ctx = RunContext(ruleset="5.1.0", benchmark="rgat", benchmark_keys=frozenset({"rgat"}))
    fields, _ = checks._outcome_fields(check_run(path, "r/result_0.txt", ctx))
    json.dumps(fields, allow_nan=False)


@pytest.mark.django_db(transaction=True)  # eager tasks run in on_commit hooks
def test_a_zip_whose_members_lie_before_its_start_is_refused_as_corrupt(rounds, tmp_path):
    """Found by fuzzing (tests/fuzz/fuzz_unpack.py): the seek to a negative offset was an OSError, so `internal`."""
    archive = tmp_path / "b.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for name, data in members_of(acme(tmp_path)):
            zf.writestr(name, data)
    data = bytearray(archive.read_bytes())
    end = data.rindex(b"PK\x05\x06")  # the end record: where it says the central directory starts
    start = int.from_bytes(data[end + 16 : end + 20], "little")
    data[end + 16 : end + 20] = (start + 100_000).to_bytes(4, "little")
    archive.write_bytes(bytes(data))
    assert_refused(ingest(archive), "bundle.truncated", "corrupt")


@pytest.mark.parametrize("status", [["Available cloud"], {"a": 1}, 7, None])
@pytest.mark.django_db(transaction=True)  # eager tasks run in on_commit hooks
def test_a_status_or_division_that_is_no_text_is_read_as_none(rounds, tmp_path, status):
    """Found by fuzzing (tests/fuzz/fuzz_systems.py): reading the category called .lower() on a list."""
    fields = fields_of({"status": status, "division": status}, "system.json")
    assert (fields["category"], fields["division"]) == ("unknown", "closed")
    root = acme(tmp_path)
    path = root / "systems" / "alpha.json"
    path.write_text(
        json.dumps({**json.loads(path.read_text()), "status": status, "division": status})
    )
    submission = ingest(root)
    assert_checked(submission)
    system = System.objects.get(submission=submission)
    assert (system.category, system.division) == ("unknown", "closed")


def test_a_crash_in_the_system_checks_is_an_error_on_the_description(monkeypatch):
    from submissions.checking.rules import SystemFacts, check_system, systems

    def crash(description, description_format):
        raise IndexError("a bug")

    monkeypatch.setattr(
        systems.descriptions, "value_problems", crash
    )  # a fault of ours, stood in by a function
    [finding] = check_system(
        SystemFacts({"number_of_nodes": "1"}, "entry.json", "A/systems/s.json"), "0.6.0"
    )[-1:]
    assert (finding.rule, finding.severity, finding.file) == (
        "system.check-crashed",
        "error",
        "A/systems/s.json",
    )
    assert "IndexError: a bug" in finding.message


@pytest.mark.parametrize("value", [8, None, {"a": 1}, ["x"]])
def test_a_field_mlperf_logging_reads_as_text_given_otherwise_is_an_error_not_a_crash(value):
    """Found by fuzzing (tests/fuzz/fuzz_systems.py): the library's checker joins these fields as text."""
    from submissions.checking.rules import SystemFacts, check_system
    from submissions.synthetic.bundles import system_json

    description = {
        **system_json("Acme", SystemSpec("s")),
        "accelerators_per_node": value,
        "submitter": value,
    }
    found = check_system(SystemFacts(description, "system.json", "A/systems/s.json"), "5.1.0")
    assert "system.check-crashed" not in {f.rule for f in found}
    invalid = [
        f.message for f in found if f.rule == "system.invalid-field" and "not text" in f.message
    ]
    assert len(invalid) == 2 and "'accelerators_per_node' is " + repr(value) in invalid[1]


@pytest.mark.django_db(transaction=True)  # eager tasks run in on_commit hooks
def test_a_zip_member_with_an_empty_name_is_refused(rounds, tmp_path):
    """Found by fuzzing (tests/fuzz/fuzz_unpack.py): zipfile's is_dir() raised IndexError on it."""
    archive = tmp_path / "b.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr(zipfile.ZipInfo(""), b"x")
        for name, data in members_of(acme(tmp_path)):
            zf.writestr(name, data)
    assert_refused(ingest(archive), "bundle.bad-path", "empty name")


@pytest.mark.django_db(transaction=True)  # eager tasks run in on_commit hooks
def test_a_zip_needing_a_version_zipfile_lacks_is_refused(rounds, tmp_path):
    """Found by fuzzing (tests/fuzz/fuzz_unpack.py): zipfile raised NotImplementedError on opening it."""
    archive = tmp_path / "b.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for name, data in members_of(acme(tmp_path)):
            zf.writestr(name, data)
    data = bytearray(archive.read_bytes())
    entry = data.index(
        b"PK\x01\x02"
    )  # the first central directory entry: its "version needed to extract"
    data[entry + 6 : entry + 8] = (235).to_bytes(2, "little")
    archive.write_bytes(bytes(data))
    assert_refused(ingest(archive), "bundle.unsupported", "zip file version 23.5")


@pytest.mark.django_db(transaction=True)  # eager tasks run in on_commit hooks
def test_a_zip_name_marked_utf8_that_is_not_is_refused(rounds, tmp_path):
    """Found by fuzzing (tests/fuzz/fuzz_unpack.py): zipfile raised UnicodeDecodeError on opening it."""
    archive = tmp_path / "b.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for name, data in members_of(acme(tmp_path)):
            zf.writestr(
                name.replace("Acme/systems", "Acme/systèms"), data
            )  # a UTF-8 name: flagged as one
    data = bytearray(archive.read_bytes())
    for start in range(
        len(data)
    ):  # both copies of the name (local header, central directory): bad UTF-8
        if data[start : start + 2] == "è".encode():
            data[start : start + 2] = b"\x8a\xe8"
    archive.write_bytes(bytes(data))
    assert_refused(ingest(archive), "bundle.bad-path", "marked as UTF-8")


@pytest.mark.parametrize("name", ["systems/alpha.json", "results/alpha/rgat/scaling.json"])
@pytest.mark.django_db(transaction=True)  # eager tasks run in on_commit hooks
def test_a_json_file_larger_than_any_needs_is_not_read_whole(rounds, tmp_path, name):
    root = acme(tmp_path)
    (root / name).write_text(json.dumps({"scaling_factor": 1.0, "padding": "x" * (2 << 20)}))
    submission = ingest(root)
    assert_checked(submission)
    [finding] = findings(submission, "bundle.json-too-large")
    assert (
        finding.file == f"Acme/{name}"
        and "1,024 KiB" in finding.message
        and finding.severity == "error"
    )
