"""The reference-check probes (agent/probes) in CPU mode, and their arithmetic."""

import json
import math
import time

import pytest


# Fixtures, not imports at the top: each of `make test`'s workers collects every module, and PyTorch
# takes about 2 s to import (agent.probes imports it); only the worker that runs these tests pays it.
@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch", reason="PyTorch is not installed (requirements-agent.txt)")


@pytest.fixture(scope="module")
def probes(torch):
    import agent.probes

    return agent.probes


@pytest.mark.parametrize("benchmark", ["llama31_8b", "llama2_70b_lora", "resnet", "retinanet"])
def test_each_probe_runs_at_cpu_scale_and_says_what_it_ran(benchmark, probes, torch):
    result = probes.run_probe(benchmark, device="cpu", **probes.TYPICAL[benchmark])

    assert json.loads(json.dumps(result)) == result  # plain JSON: it travels as a task argument
    assert result["benchmark"] == benchmark
    assert result["cpu"] is True and result["device_type"] == "cpu"
    assert result["device"].startswith("CPU")
    assert "miniature" in result["model"]
    assert result["torch"] == torch.__version__ and result["cuda"] is None
    assert result["versions"] == {"torch": torch.__version__, "cuda": None}
    assert result["precision"] == "bf16" and result["dtype"] == "float32"
    assert result["autocast"] is False
    assert (result["warmup_steps"], result["steps"]) == probes.common.DEFAULT_STEPS["cpu"]
    sps = result["samples_per_second_per_accelerator"]
    assert math.isfinite(sps) and sps > 0
    assert sps == result["measured_samples_per_second"]
    assert "scaled_by_layers" not in result  # CPU mode is never scaled up to a GPU figure
    assert 0 < result["timed_seconds"] <= result["probe_seconds"]
    assert 1 <= result["shapes"]["batch_size"] <= probes.TYPICAL[benchmark]["batch_size"]


def test_the_language_models_say_how_many_layers_ran_of_how_many(probes):
    full = probes.run_probe("llama31_8b", device="cpu", batch_size=2, seq_len=8192)
    lora = probes.run_probe("llama2_70b_lora", device="cpu", batch_size=1, seq_len=4096)

    assert (full["layers_run"], full["layers_full"]) == (2, 32)
    assert (lora["layers_run"], lora["layers_full"]) == (2, 80)
    assert full["params_trained"] == full["params_run"]
    # LoRA trains its adapters only: rank 16 on QKV (64 -> 128) and the output projection (64 -> 64)
    # of each of the 2 layers.
    assert lora["params_trained"] == 2 * 16 * ((64 + 128) + (64 + 64))
    assert lora["shapes"]["lora_rank"] == 16 and full["shapes"]["lora_rank"] is None
    assert full["shapes"]["seq_len"] == 64  # the miniature's window, whatever the log's length


def test_a_benchmark_without_a_probe_says_so(probes):
    with pytest.raises(probes.ProbeError, match="^no probe for this benchmark$"):
        probes.run_probe("bert", batch_size=8, device="cpu")


@pytest.mark.parametrize(
    "kwargs",
    [
        {"batch_size": 0},
        {"batch_size": "8"},
        {"batch_size": True},
        {"batch_size": 2, "seq_len": -1},
        {"batch_size": 2, "precision": "fp8"},
        {"batch_size": 2, "device": "tpu"},
    ],
)
def test_bad_job_fields_are_refused_with_the_reason(kwargs, probes):
    with pytest.raises(probes.ProbeError):
        probes.run_probe("resnet", **{"device": "cpu", **kwargs})


def test_the_precision_sets_the_compute_dtype_on_cuda_and_cpu_mode_runs_fp32(probes, torch):
    cuda, cpu = torch.device("cuda", 0), torch.device("cpu")
    assert probes.common.dtype_for("bf16", cuda) == torch.bfloat16
    assert probes.common.dtype_for("fp16", cuda) == torch.float16  # Volta: no bf16
    assert probes.common.dtype_for("fp32", cuda) == torch.float32
    assert {probes.common.dtype_for(p, cpu) for p in ("bf16", "fp16", "fp32")} == {torch.float32}


def test_cuda_asked_for_without_cuda_is_refused(probes, torch):
    if torch.cuda.is_available():
        pytest.skip("this host has CUDA")
    with pytest.raises(probes.ProbeError, match="CUDA"):
        probes.run_probe("resnet", batch_size=2, device="cuda")


def test_layer_scaling_without_fixed_cost_is_the_layer_ratio(probes):
    scaled = probes.common.layer_scaled(
        10.0, layers_run=4, layers_full=32, layer_flops=1, fixed_flops=0
    )
    assert scaled == pytest.approx(10.0 * 4 / 32)


def test_layer_scaling_counts_the_output_head_once(probes):
    # A step of 4 layers and a head worth 2 layers takes 6 units; the full model's 32 + 2 = 34.
    scaled = probes.common.layer_scaled(
        10.0, layers_run=4, layers_full=32, layer_flops=1, fixed_flops=2
    )
    assert scaled == pytest.approx(10.0 * 6 / 34)
    assert probes.common.layer_scaled(
        10.0, layers_run=32, layers_full=32, layer_flops=5, fixed_flops=7
    ) == pytest.approx(10.0)


@pytest.mark.parametrize("run", [0, 33, -1])
def test_layer_scaling_refuses_impossible_layer_counts(run, probes):
    with pytest.raises(ValueError):
        probes.common.layer_scaled(
            1.0, layers_run=run, layers_full=32, layer_flops=1, fixed_flops=0
        )


def test_the_llama_8b_head_weighs_about_two_and_a_half_layers(probes):
    s = probes.transformer.SHAPES["llama31_8b"]
    assert 218e6 < s.layer_params() < 219e6  # 32 layers of these + embeddings + head: 8.03 B
    assert 2.0 < s.fixed_flops() / s.layer_flops() < 2.6


def test_the_window_shrinks_to_fit_max_seconds_and_grows_to_min_seconds(probes, torch):
    cpu = torch.device("cpu")

    def step():
        time.sleep(0.02)

    short = probes.common.measure(
        step, cpu, samples_per_step=4, warmup_steps=1, steps=1000, max_seconds=0.2
    )
    assert 1 <= short.steps < 20
    long = probes.common.measure(
        step, cpu, samples_per_step=4, warmup_steps=1, steps=1, min_seconds=0.1
    )
    assert long.steps >= 4 and long.seconds >= 0.1
    assert long.samples_per_second == pytest.approx(4 * long.steps / long.seconds)


def test_a_window_that_speeds_up_after_the_warm_up_still_lasts_min_seconds(probes, torch):
    cpu = torch.device("cpu")
    delays = iter([0.2] + [0.01] * 1000)  # a slow warm-up step, then fast ones

    window = probes.common.measure(
        lambda: time.sleep(next(delays)),
        cpu,
        samples_per_step=1,
        warmup_steps=1,
        steps=1,
        min_seconds=0.3,
        max_seconds=5,
    )
    assert window.seconds >= 0.3 and window.steps > 2
