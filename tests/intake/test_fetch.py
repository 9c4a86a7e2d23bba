"""What a round's import fetches of a published repository (submissions/intake/fetch.py): the folders of each
submitter that the portal reads, never its code. The fetch itself is tested end to end in test_import_round.py."""

from submissions.intake.fetch import wanted_folders


def test_it_fetches_each_submitter_s_results_and_systems_and_no_code():
    paths = [
        "README.md",
        "NVIDIA/results/dgx/bert/result_0.txt",
        "NVIDIA/systems/dgx.json",
        "NVIDIA/benchmarks/bert/implementations/results/x.txt",  # code's own results/ folder
        "v0.5.0/google/cloud_v2.8/resnet-tpuv2-8/results/8xV100/resnet/result_0.txt",
        "v0.5.0/google/cloud_v2.8/resnet-tpuv2-8/submission.json",
        "v0.5.0/nvidia/submission/results/dgx1/ssd/result_0.txt",
        "v0.5.0/nvidia/submission/code/ssd/results/log.txt",
    ]
    assert wanted_folders(paths) == {
        "NVIDIA": ["NVIDIA/results", "NVIDIA/systems"],
        "v0.5.0/google": ["v0.5.0/google/cloud_v2.8/resnet-tpuv2-8/results"],
        "v0.5.0/nvidia": ["v0.5.0/nvidia/submission/results"],
    }
