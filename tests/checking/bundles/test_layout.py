"""Tests for submissions.checking.bundles.layout: synthetic trees for each rule, then the three real rounds."""

import hashlib
import json
import os
import re
import tarfile
from collections import defaultdict
from pathlib import Path

import pytest

from submissions.checking.bundles import LayoutError, detect

from ...conftest import SHARED, shared_plain_tar

RESULT = re.compile(r"result_\d+\.txt")


@pytest.fixture(autouse=True)
def media():
    """These tests need no Django: shadow conftest's autouse fixture, which wants pytest-django."""
    return None


def tree(base: Path, files: dict) -> Path:
    for name, content in files.items():
        assert not name.startswith("/"), name  # never write outside tmp_path
        path = base / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content if isinstance(content, str) else json.dumps(content))
    return base


def runs(prefix: str, n: int) -> dict:
    return {f"{prefix}/result_{i}.txt": ":::MLLOG {}\n" for i in range(n)}


def notes_matching(layout, pattern: str) -> list[str]:
    return [n for n in layout.notes if re.search(pattern, n)]


# --- v0.6+ -------------------------------------------------------------------


def test_v06_submitter_folder_at_top(tmp_path):
    tree(
        tmp_path,
        {
            "NVIDIA/systems/dgx.json": {"submitter": "NVIDIA", "system_name": "DGX"},
            "NVIDIA/systems/README.md": "# how to install",
            **runs("NVIDIA/results/dgx/resnet", 12),
            "NVIDIA/results/dgx/resnet/scaling.json": {"scaling_factor": 1.0},
            "NVIDIA/results/dgx/resnet/config_DGX.sh": "export X=1",
            "NVIDIA/results/dgx/resnet/.DS_Store": "",
            "NVIDIA/code/resnet/README.md": "not ours",
        },
    )
    layout = detect(tmp_path)
    assert (layout.kind, layout.submitter, layout.root) == ("v0.6+", "NVIDIA", "NVIDIA")
    [system] = layout.systems
    assert (
        system.name,
        system.description["system_name"],
        system.description_path,
        system.description_format,
    ) == ("dgx", "DGX", "NVIDIA/systems/dgx.json", "system.json")
    [result] = layout.results
    assert (result.system, result.benchmark, result.path) == (
        "dgx",
        "resnet",
        "NVIDIA/results/dgx/resnet",
    )
    assert [p.rsplit("/", 1)[1] for p in result.run_files] == [
        f"result_{i}.txt" for i in range(12)
    ]  # 2 before 10
    assert result.extra_files == [
        "NVIDIA/results/dgx/resnet/config_DGX.sh",
        "NVIDIA/results/dgx/resnet/scaling.json",
    ]
    assert notes_matching(layout, r"^NVIDIA/systems/README\.md: ")
    assert notes_matching(layout, r"^NVIDIA/results/dgx/resnet/\.DS_Store: stray file")
    assert not notes_matching(layout, "code/")  # code is a compliance matter, not a layout note


def test_a_result_file_without_log_lines_is_a_run_the_summarizer_drops(tmp_path):
    # Intel's v1.0 MiniGo: result_run1..10.txt, of which result_run10.txt holds no MLPerf line. mlperf-logging's
    # summarizer reads every result_*.txt and drops that one as a failed run; so is it a run here (it fails its
    # checks), and not an extra file. A script with no log lines beside it stays an extra file.
    logs = {f"Intel/results/x/minigo/result_run{i}.txt": ":::MLLOG {}\n" for i in range(1, 10)}
    tree(
        tmp_path,
        {
            "Intel/systems/x.json": {"submitter": "Intel"},
            **logs,
            "Intel/results/x/minigo/result_run10.txt": "mpirun: job aborted\n",
            "Intel/results/x/minigo/process_loop.sh": "./postprocess.py\n",
        },
    )
    [result] = detect(tmp_path).results
    assert len(result.run_files) == 10
    assert "Intel/results/x/minigo/result_run10.txt" in result.run_files
    assert result.extra_files == ["Intel/results/x/minigo/process_loop.sh"]


def test_v06_contents_packed_directly_take_the_submitter_from_the_descriptions(tmp_path):
    tree(tmp_path, {"systems/a.json": {"submitter": "Krai"}, **runs("results/a/bert", 3)})
    layout = detect(tmp_path)
    assert (layout.submitter, layout.root) == ("Krai", "")
    assert layout.results[0].path == "results/a/bert"
    assert notes_matching(layout, "no submitter folder")


def test_v06_entry_json_beside_results_alibaba_style(tmp_path):
    tree(
        tmp_path,
        {
            "Alibaba/results/sinian/entry.json": {"hardware": "V100"},
            "Alibaba/results/sinian/.gitkeep": "",
            **runs("Alibaba/results/sinian/resnet", 5),
        },
    )
    layout = detect(tmp_path)
    [system] = layout.systems
    assert (system.name, system.description_format, system.description_path) == (
        "sinian",
        "entry.json",
        "Alibaba/results/sinian/entry.json",
    )
    assert system.description == {"hardware": "V100"}
    assert len(layout.results[0].run_files) == 5
    assert notes_matching(layout, r"sinian/\.gitkeep: stray file")


def test_v06_notes_for_unlisted_and_undescribed_systems_and_empty_benchmarks(tmp_path):
    tree(
        tmp_path,
        {
            "Dell/systems/idle.json": {"submitter": "Dell"},
            "Dell/systems/busy.json": {"submitter": "Dell"},
            **runs("Dell/results/busy/bert", 2),
            "Dell/results/busy/llama/.keep-empty/x": "",
            **runs("Dell/results/nodesc/bert", 1),
        },
    )
    (tmp_path / "Dell/results/idle/bert").mkdir(parents=True)
    (tmp_path / "Dell/systems/unused.json").write_text("{}")
    layout = detect(tmp_path)
    assert [s.name for s in layout.systems] == ["busy", "idle", "nodesc"]
    assert layout.systems[2].description == {} and layout.systems[2].description_path is None
    assert notes_matching(layout, r"^Dell/systems/unused\.json: system has no results")
    assert notes_matching(layout, r"^Dell/results/nodesc/: no description")
    # A benchmark folder without a log is a result all the same, with the reason it has no runs.
    no_logs = {(r.system, r.benchmark): r.no_logs for r in layout.results if not r.run_files}
    assert no_logs == {
        (
            "busy",
            "llama",
        ): "Dell/results/busy/llama/ holds only folders (.keep-empty/); logs are read only directly "
        "inside the benchmark folder.",
        ("idle", "bert"): "the folder Dell/results/idle/bert/ is empty.",
    }


def test_unreadable_json_is_a_note_with_the_line(tmp_path):
    tree(
        tmp_path, {"X/systems/s.json": '{\n  "a": 1,\n  "b": oops\n}', **runs("X/results/s/ssd", 1)}
    )
    layout = detect(tmp_path)
    assert layout.systems[0].description == {}
    [note] = notes_matching(layout, r"^X/systems/s\.json: not valid JSON")
    assert "line 3" in note and '"b": oops' in note


def test_nvidia_v06_key_value_lines_are_read(tmp_path):
    lines = 'org: {"value": "NVIDIA", "metadata": {"lineno": 1}}\ndivision: {"value": "closed", "metadata": {}}\n'
    tree(tmp_path, {"NVIDIA/systems/dgx1.json": lines, **runs("NVIDIA/results/dgx1/ssd", 1)})
    layout = detect(tmp_path)
    assert layout.systems[0].description == {"org": "NVIDIA", "division": "closed"}
    assert notes_matching(layout, r"dgx1\.json: not valid JSON \(line 1 .*read as")


def test_no_result_logs_is_an_error_that_says_what_was_expected(tmp_path):
    tree(
        tmp_path,
        {
            "NVIDIA/systems/a.json": {},
            "NVIDIA/results/a/resnet/log.txt": "x",
            "stray/result_0.txt": "x",
        },
    )
    with pytest.raises(LayoutError) as caught:
        detect(tmp_path)
    assert caught.value.rule == "layout.no-results"
    assert "results/<system>/<benchmark>/result_N.txt" in str(caught.value) and "stray" in str(
        caught.value
    )


def test_several_v06_submitters_are_refused(tmp_path):
    tree(
        tmp_path,
        {
            "A/systems/s.json": {},
            **runs("A/results/s/bert", 1),
            "B/systems/t.json": {},
            **runs("B/results/t/bert", 1),
        },
    )
    with pytest.raises(LayoutError) as caught:
        detect(tmp_path)
    assert caught.value.rule == "layout.multiple-submitters" and "A" in str(caught.value)


# --- v0.5 --------------------------------------------------------------------

TPU_V2 = {"hardware": "tpuv2-8"}
TPU_V3 = {"hardware": "tpuv3-8"}


def google_v05(base: Path, prefix="google") -> Path:
    top = f"{prefix}/" if prefix else ""
    files = {}
    for holder, hw in (("cloud_v2.8", TPU_V2), ("cloud_v3.8", TPU_V3)):
        for bench in ("gnmt", "resnet", "ssd"):
            entry = f"{top}{holder}/{bench}-{holder}"
            files[f"{entry}/submission.json"] = {"org": "Google Inc.", "poc_email": "x@google.com"}
            files[f"{entry}/results/tpu/entry.json"] = hw
            files.update(runs(f"{entry}/results/tpu/{bench}", 5))
    files[f"{top}cloud_v100x8/submission.json"] = {"org": "Google"}
    files[f"{top}cloud_v100x8/results/8xV100/entry.json"] = {"hardware": "8x V100"}
    files.update(runs(f"{top}cloud_v100x8/results/8xV100/resnet", 5))
    return tree(base, files)


def test_v05_repeated_system_names_take_the_folder_above_the_entry_and_merge(tmp_path):
    layout = detect(google_v05(tmp_path))
    assert (layout.kind, layout.submitter, layout.root) == ("v0.5", "Google Inc.", "google")
    assert [s.name for s in layout.systems] == ["8xV100", "cloud_v2.8", "cloud_v3.8"]
    v28 = [r for r in layout.results if r.system == "cloud_v2.8"]
    assert [r.benchmark for r in v28] == ["gnmt", "resnet", "ssd"]
    assert v28[1].path == "google/cloud_v2.8/resnet-cloud_v2.8/results/tpu/resnet"
    assert (
        layout.systems[1].description == TPU_V2
        and layout.systems[1].description_format == "entry.json"
    )
    assert notes_matching(layout, r"different organisations: 'Google Inc\.' \(6\), 'Google' \(1\)")


def test_v05_differing_descriptions_under_one_holder_fall_back_to_the_entry_path(tmp_path):
    google_v05(tmp_path)
    (tmp_path / "google/cloud_v2.8/ssd-cloud_v2.8/results/tpu/entry.json").write_text(
        json.dumps({"hardware": "other"})
    )
    names = {r.path.split("/")[2]: r.system for r in detect(tmp_path).results}
    assert names["gnmt-cloud_v2.8"] == "cloud_v2.8/gnmt-cloud_v2.8"
    assert names["ssd-cloud_v2.8"] == "cloud_v2.8/ssd-cloud_v2.8"
    assert names["resnet-cloud_v3.8"] == "cloud_v3.8"


@pytest.mark.parametrize("prefix,root", [("", ""), ("v0.5.0/google", "v0.5.0/google")])
def test_v05_root_found_at_any_depth(tmp_path, prefix, root):
    layout = detect(google_v05(tmp_path, prefix))
    assert layout.root == root and len(layout.systems) == 3
    assert all(r.path.startswith(prefix) for r in layout.results)


def test_v05_nvidia_style_single_entry_and_systems_without_logs(tmp_path):
    tree(
        tmp_path,
        {
            "nvidia/submission/submission.json": {"org": "Nvidia"},
            "nvidia/submission/results/dgx1/entry.json": {"hardware": "DGX-1"},
            "nvidia/submission/results/dgx1/.gitkeep": "",
            **runs("nvidia/submission/results/dgx1/ncf", 3),
            "nvidia/submission/results/private/entry.json": {"hardware": "SKX"},
        },
    )
    (tmp_path / "nvidia/submission/results/private/minigo").mkdir()
    (tmp_path / "nvidia/submission/results/unused").mkdir()
    (tmp_path / "nvidia/submission/results/unused/entry.json").write_text("{}")
    layout = detect(tmp_path)
    assert (layout.kind, layout.submitter, layout.root) == ("v0.5", "Nvidia", "nvidia")
    assert [s.name for s in layout.systems] == ["dgx1", "private"]
    assert [
        (r.system, r.benchmark, r.run_files) for r in layout.results if r.system == "private"
    ] == [("private", "minigo", [])]
    assert notes_matching(layout, r"results/unused/entry\.json: system has no results")
    assert notes_matching(layout, r"dgx1/\.gitkeep: stray file")


def test_v05_org_missing_falls_back_to_the_folder_name(tmp_path):
    tree(
        tmp_path,
        {
            "intel/a_submission/submission.json": {"poc_email": "x"},
            "intel/a_submission/results/skx/entry.json": {},
            **runs("intel/a_submission/results/skx/resnet", 1),
        },
    )
    assert detect(tmp_path).submitter == "intel"


def test_v05_whole_round_is_several_submitters(tmp_path):
    google_v05(tmp_path, "v0.5.0/google")
    tree(
        tmp_path,
        {
            "v0.5.0/intel/x/submission.json": {"org": "Intel Corp."},
            "v0.5.0/intel/x/results/skx/entry.json": {},
            **runs("v0.5.0/intel/x/results/skx/ncf", 1),
        },
    )
    with pytest.raises(LayoutError) as caught:
        detect(tmp_path)
    assert caught.value.rule == "layout.multiple-submitters"


# --- the real rounds -----------------------------------------------------------


def _submitter_of(member: str, round_: str) -> str | None:
    parts = [p for p in member.split("/") if p not in ("", ".")]
    if round_ == "0.5":
        parts = parts[1:]  # v0.5.0/
    return parts[0] if len(parts) > 1 else None


@pytest.fixture(scope="module")
def bundles(tmp_path_factory):
    """Each round's tarball split, once, into one folder per submitter holding `<Submitter>/...`,
    as `tar -C <round> -czf x.tgz <Submitter>` would give (v0.5 without its v0.5.0/ folder)."""
    out = {}
    for round_ in ("0.5", "0.6", "5.1"):
        archive = SHARED / f"training_v{round_}_results.tar.xz"
        if not archive.exists():
            print(f"skipping the real rounds: {archive} is absent (set MLPERF_SHARED_DIR)")
            pytest.skip(f"{archive} is absent")
        base = tmp_path_factory.mktemp(f"v{round_}")
        with tarfile.open(shared_plain_tar(archive.name)) as tf:
            for member in tf:
                sub = _submitter_of(member.name, round_)
                if sub and (
                    member.isreg() or member.isdir()
                ):  # empty folders matter: they make notes
                    if round_ == "0.5":
                        member.name = member.name.split("/", 1)[1]
                    tf.extract(member, base / sub, filter="data")
        out[round_] = {sub: base / sub for sub in sorted(os.listdir(base))}
    return out


def expected_counts(bundle: Path, kind: str) -> tuple[int, int, int]:
    """Systems, results, runs by a plain walk: a result is a results/<s>/<b> folder, with or without logs;
    runs are its result_N.txt; a system is a results/<s> folder with results, counted once per (folder name,
    entry.json bytes) for v0.5, unless those folders hold one benchmark twice (then each is a system)."""
    run_dirs = defaultdict(int)
    for dirpath, _, files in os.walk(bundle):
        parts = Path(dirpath).relative_to(bundle).parts
        if len(parts) >= 3 and parts[-3] == "results":
            run_dirs[Path(dirpath)] += sum(1 for f in files if RESULT.fullmatch(f))
    system_dirs = {d.parent for d in run_dirs}
    if kind == "v0.5":

        def entry(d):
            return (
                (d / "entry.json").read_bytes() if (d / "entry.json").exists() else str(d).encode()
            )

        groups = defaultdict(list)
        for d in system_dirs:
            groups[(d.name, hashlib.sha256(entry(d)).hexdigest())].append(d)

        def benchmarks(group):
            return [b.name for b in run_dirs if b.parent in group]

        systems = sum(
            1 if len(set(benchmarks(g))) == len(benchmarks(g)) else len(g) for g in groups.values()
        )
    else:
        systems = len({d.name for d in system_dirs})
    return systems, len(run_dirs), sum(run_dirs.values())


@pytest.mark.shared_rounds
def test_real_rounds_counts_per_submitter(bundles):
    totals = {}
    for round_, subs in bundles.items():
        summed = [0, 0, 0]
        for sub, bundle in subs.items():
            layout = detect(bundle)
            assert layout.kind == ("v0.5" if round_ == "0.5" else "v0.6+")
            assert layout.root == sub
            got = (
                len(layout.systems),
                len(layout.results),
                sum(len(r.run_files) for r in layout.results),
            )
            assert got == expected_counts(bundle, layout.kind), f"v{round_} {sub}"
            assert {r.system for r in layout.results} == {s.name for s in layout.systems}
            for r in layout.results:  # every path is real and bundle-relative
                assert all((bundle / p).is_file() for p in r.run_files + r.extra_files)
            summed = [a + b for a, b in zip(summed, got)]
        totals[round_] = summed
        print(
            f"v{round_}: {summed[0]} systems, {summed[1]} results, {summed[2]} runs over {len(subs)} submitters"
        )
    # Empty benchmark folders are results without runs: v0.5 Intel's MiniGo (4) and NVIDIA's (8), v0.6 NVIDIA's and
    # Intel's MiniGo, v5.1 Dell's llama2_70b_lora.
    assert totals == {"0.5": [24, 47, 600], "0.6": [32, 63, 430], "5.1": [91, 185, 1669]}


@pytest.mark.shared_rounds
def test_real_v05_hard_facts(bundles):
    google = detect(bundles["0.5"]["google"])
    assert google.submitter == "Google Inc."
    assert {s.name for s in google.systems} == {
        "8xV100",
        "cloud_v2.512",
        "cloud_v2.8",
        "cloud_v3.8",
        "research_v3.32",
        "research_v3.512",
    }
    v28 = [r for r in google.results if r.system == "cloud_v2.8"]
    assert [r.benchmark for r in v28] == ["gnmt", "resnet", "ssd"]
    assert "google/cloud_v2.8/resnet-tpuv2-8/results/tpu/resnet" in [r.path for r in v28]

    intel = detect(bundles["0.5"]["intel"])
    assert intel.submitter == "Intel Corp."
    assert sorted(
        s.name for s in intel.systems
    ) == [  # MiniGo's systems are listed although their logs are missing
        "intel_minigo_submission_private_tensorflow/skx_8180_2s_1x",
        "intel_minigo_submission_private_tensorflow/skx_8180_4s_1x",
        "intel_minigo_submission_public_tensorflow/skx_8180_2s_1x",
        "intel_minigo_submission_public_tensorflow/skx_8180_4s_1x",
        "intel_resnet_submission/skx_8180_2s_1x",
        "skx8180",
        "skx_8180_2s_8x",
        "skx_8180_4s_4x",
    ]
    minigo = [r for r in intel.results if r.benchmark == "minigo"]
    assert len(minigo) == 4 and all(
        not r.run_files and r.no_logs.endswith("/minigo/ is empty.") for r in minigo
    )
    assert notes_matching(intel, r"ncf_timer\.sh: file not part of the layout")
    assert notes_matching(intel, r"intel_resnet_submission/\.DS_Store: stray file")

    nvidia = detect(bundles["0.5"]["nvidia"])
    assert (nvidia.submitter, nvidia.root, len(nvidia.systems)) == ("Nvidia", "nvidia", 10)
    assert nvidia.results[0].path.startswith("nvidia/submission/results/")


@pytest.mark.shared_rounds
def test_real_v06_hard_facts(bundles):
    alibaba = detect(bundles["0.6"]["Alibaba"])
    [sinian] = alibaba.systems
    assert (sinian.name, sinian.description_format) == ("sinian", "entry.json")
    [resnet] = alibaba.results
    assert (resnet.benchmark, len(resnet.run_files)) == ("resnet", 5)

    nvidia = detect(bundles["0.6"]["NVIDIA"])
    assert all(
        s.description.get("org") == "NVIDIA" for s in nvidia.systems
    )  # read from 'key: {value}' lines
    assert notes_matching(nvidia, r"NVIDIA/systems/README\.md: file not part of the layout")
    [empty] = [r for r in nvidia.results if not r.run_files]
    assert (empty.system, empty.benchmark, empty.no_logs) == (
        "dgx1_n3_ngc19.05_tensorflow",
        "minigo",
        "the folder NVIDIA/results/dgx1_n3_ngc19.05_tensorflow/minigo/ is empty.",
    )
    minigo = [
        r
        for r in nvidia.results
        if r.system == "dgx1_ngc19.05_tensorflow" and r.benchmark == "minigo"
    ]
    assert [r.run_indices for r in minigo] == [list(range(10))]
    assert {r.benchmark for r in detect(bundles["0.6"]["Google"]).results} >= {
        "mask",
        "gnmt",
        "resnet",
    }


@pytest.mark.shared_rounds
def test_real_v51_hard_facts(bundles):
    nvidia = detect(bundles["5.1"]["NVIDIA"])
    assert (
        len(nvidia.systems),
        len(nvidia.results),
        sum(len(r.run_files) for r in nvidia.results),
    ) == (19, 31, 267)
    assert all(s.description_format == "system.json" and s.description for s in nvidia.systems)

    dell = detect(bundles["5.1"]["Dell"])
    assert notes_matching(dell, r"1xXE7745x8H200-NVL-141GB\.json: system has no results")
    [empty] = [r for r in dell.results if not r.run_files]
    assert (empty.system, empty.benchmark) == ("2xXE9685Lx8B200-SXM-180GB", "llama2_70b_lora")
    extras = [f for r in dell.results for f in r.extra_files]
    assert any(f.endswith("/config_X780x8B200-SXM-180G_1x8x1xtp1pp1cp1.sh") for f in extras)
    assert any(f.endswith("/scaling.json") for f in extras)
