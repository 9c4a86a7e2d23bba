#!/usr/bin/env python
"""The reference-check probes' throughput here, and what the agent path costs per job.

1. Each probe (agent/probes) called directly: samples/s per accelerator, with what it ran.
   On a machine without CUDA that is CPU mode's miniature (labelled so); `--device cuda --full`
   runs the real sizes at the v5.1 logs' per-accelerator batch (llama31_8b 2 x 8192 tokens,
   llama2_70b_lora 1 x 8192 with as many layers as fit, ResNet-50 256, RetinaNet 32).
2. Unless --no-agent: a real agent worker process (`celery -A agent.app worker`, concurrency 1)
   on Redis. For each benchmark, after one warm-up job, N jobs are queued one after the other and
   timed from send to the moment this process receives the agent's answer (the portal's task
   message, consumed here from a private reply queue: no Django); the same probe is called N
   times in this process. Overhead per job = mean via the agent - mean direct (target < 1 s).

    python bench/probe.py                                # CPU mode, agent path on local Redis
    python bench/probe.py --device cuda --full --no-agent   # a GPU host (bench/gpu_probe.sh)

Broker: --broker, else BENCH_BROKER_URL, else redis://127.0.0.1:6379/4 (make test uses 8-15).
"""

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

BENCHMARKS = ["llama31_8b", "llama2_70b_lora", "resnet", "retinanet"]
# Without --full: small shapes that run anywhere in seconds (CPU mode shrinks them further).
QUICK = {
    "llama31_8b": {"batch_size": 1, "seq_len": 1024},
    "llama2_70b_lora": {"batch_size": 1, "seq_len": 1024},
    "resnet": {"batch_size": 32, "seq_len": None},
    "retinanet": {"batch_size": 2, "seq_len": None},
}


def run_direct(benchmark, shape, device, precision, max_seconds):
    from agent.probes import run_probe

    started = time.perf_counter()
    try:
        result = run_probe(
            benchmark, device=device, precision=precision, max_seconds=max_seconds, **shape
        )
    except Exception as error:  # one probe's failure must not lose the others' figures
        result = {"benchmark": benchmark, "error": f"{type(error).__name__}: {error}"}
    result["wall_seconds"] = time.perf_counter() - started
    return result


def fmt(x, digits=1):
    return "-" if x is None else f"{x:,.{digits}f}"


def print_head():
    head = (
        f"{'benchmark':<16} {'device':<28} {'batch':>5} {'seq':>5} {'layers':>7} {'steps':>5} "
        f"{'timed s':>8} {'measured/s':>11} {'per accel/s':>11}  note"
    )
    print(head)
    print("-" * len(head), flush=True)


def print_row(r):
    """One probe's line, printed as soon as it ran (a GPU run cut short keeps what it has)."""
    if "error" in r:
        print(f"{r['benchmark']:<16} ERROR {r['error']}", flush=True)
        return
    shapes = r.get("shapes", {})
    layers = f"{r['layers_run']}/{r['layers_full']}" if "layers_run" in r else "all"
    notes = []
    if r.get("cpu"):
        notes.append("CPU mode (miniature; never compared)")
    if r.get("scaled_by_layers"):
        notes.append("scaled by layers")
    if r.get("micro_batch_size", shapes.get("batch_size")) != shapes.get("batch_size"):
        notes.append(f"micro-batch {r['micro_batch_size']}")
    print(
        f"{r['benchmark']:<16} {r['device'][:28]:<28} {shapes.get('batch_size', '-'):>5} "
        f"{shapes.get('seq_len') or '-':>5} {layers:>7} {r['steps']:>5} "
        f"{r['timed_seconds']:>8.2f} {fmt(r['measured_samples_per_second'], 2):>11} "
        f"{fmt(r['samples_per_second_per_accelerator'], 2):>11}  {'; '.join(notes)}",
        flush=True,
    )


class AgentWorker:
    """`celery -A agent.app worker` on a private job queue, its heartbeats and answers sent to a
    private reply queue that this process consumes."""

    def __init__(self, broker, device, log_path):
        tag = uuid.uuid4().hex[:8]
        self.job_queue, self.reply_queue = f"bench-gpu-{tag}", f"bench-replies-{tag}"
        env = dict(
            os.environ,
            AGENT_BROKER_URL=broker,
            AGENT_HEARTBEAT_QUEUE=self.reply_queue,
            AGENT_HEARTBEAT_S="5",
        )
        if device:
            env["AGENT_DEVICE"] = device
        self.log = open(log_path, "w")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "agent.app", "worker", "-Q", self.job_queue]
            + ["-c", "1", "--prefetch-multiplier", "1", "-n", f"bench-{tag}@%h"]
            + ["--without-mingle", "--without-gossip", "--loglevel=WARNING"],
            cwd=ROOT,
            env=env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        os.environ["AGENT_BROKER_URL"] = broker
        from agent.app import app

        self.app = app
        self.conn = app.connection_for_write()
        self.replies = self.conn.SimpleQueue(self.reply_queue, accept=["json"])

    def next_message(self, task, timeout, check=None):
        """The next message for `task` (and `check`) on the reply queue; others are dropped."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or self.process.poll() is not None:
                raise RuntimeError(f"no {task} from the agent (see {self.log.name})")
            try:
                message = self.replies.get(block=True, timeout=min(left, 1.0))
            except self.replies.Empty:
                continue
            message.ack()
            body = message.payload[0][0]
            if message.headers.get("task") == task and (check is None or body["check"] == check):
                return body

    def job(self, benchmark, shape, precision, max_seconds):
        """Send one job; wait for its answer. Returns (seconds from send to answer, answer)."""
        check = str(uuid.uuid4())
        job = {
            "check": check,
            "benchmark": benchmark,
            "precision": precision,
            "max_seconds": max_seconds,
            "reply_queue": self.reply_queue,
            **shape,
        }
        started = time.perf_counter()
        self.app.send_task("agent.reference_check", args=[job], queue=self.job_queue)
        answer = self.next_message(
            "submissions.store_reference_check", max_seconds + 300, check=check
        )
        return time.perf_counter() - started, answer

    def close(self):
        try:
            os.killpg(self.process.pid, signal.SIGTERM)
            self.process.wait(timeout=30)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            os.killpg(self.process.pid, signal.SIGKILL)
        for queue in (self.job_queue, self.reply_queue):
            try:
                self.conn.default_channel.queue_delete(queue)
            except Exception:
                pass
        self.conn.release()
        self.log.close()


def agent_overhead(args, shapes):
    print(
        f"Agent path: a real `celery -A agent.app worker` on {args.broker}, {args.jobs} jobs each"
    )
    with tempfile.TemporaryDirectory() as tmp:
        worker = AgentWorker(args.broker, args.device, Path(tmp) / "agent.log")
        rows = []
        try:
            started = time.perf_counter()
            beat = worker.next_message("submissions.agent_heartbeat", 180)
            print(
                f"  agent up in {time.perf_counter() - started:.1f} s: {beat['hostname']}, "
                f"{beat['accelerator']} x{beat['accelerator_count']}, torch {beat['torch']}"
            )
            for benchmark in args.benchmarks:
                shape = shapes[benchmark]
                first, answer = worker.job(benchmark, shape, args.precision, args.max_seconds)
                if "error" in answer:
                    print(f"  {benchmark}: the agent answered an error: {answer['error']}")
                    continue
                via, inner = [], []
                for _ in range(args.jobs):
                    seconds, answer = worker.job(benchmark, shape, args.precision, args.max_seconds)
                    via.append(seconds)
                    inner.append(answer["measurement"]["probe_seconds"])
                direct = [
                    run_direct(benchmark, shape, args.device, args.precision, args.max_seconds)[
                        "wall_seconds"
                    ]
                    for _ in range(args.jobs)
                ]
                rows.append((benchmark, first, direct, via, inner))
        finally:
            worker.close()
    head = (
        f"{'benchmark':<16} {'1st job s':>9} {'direct s/job':>12} {'agent s/job':>11} "
        f"{'overhead s/job':>14} {'vs in-agent probe':>17}"
    )
    print(head)
    print("-" * len(head))
    worst = 0.0
    for benchmark, first, direct, via, inner in rows:
        overhead = statistics.mean(via) - statistics.mean(direct)
        own = statistics.mean(v - i for v, i in zip(via, inner))
        worst = max(worst, overhead)
        print(
            f"{benchmark:<16} {first:>9.2f} {statistics.mean(direct):>12.3f} "
            f"{statistics.mean(via):>11.3f} {overhead:>14.3f} {own:>17.3f}"
        )
    if rows:
        verdict = "met" if worst < 1.0 else "MISSED"
        print(f"target: overhead < 1 s per job: {verdict} (worst {worst:.3f} s)")
    return rows


def scaling_check(benchmark, shape, device, depths):
    """Time the language model at several depths of full width, fit seconds per step = a + b x
    layers, and set the full depth that the fit extrapolates beside what the probe's FLOPs-weighted
    scaling (common.layer_scaled) and a plain layer ratio make of each depth's figure."""
    from dataclasses import replace

    from agent.probes import common, transformer

    dev = common.pick_device(device)
    dtype = common.dtype_for("bf16", dev)
    s = replace(transformer.SHAPES[benchmark], seq_len=shape["seq_len"] or 8192)
    if dev.type == "cpu":  # a try of the code path only
        s = replace(transformer.cpu_shape(s), layers=s.layers)
    batch = shape["batch_size"]
    points = []
    for layers in depths:
        try:
            step, _ = transformer._step_fn(s, layers, batch, dev, dtype)  # step holds the model
            window = common.measure(step, dev, samples_per_step=batch, warmup_steps=2, steps=6)
        except Exception as error:
            if not common.out_of_memory(error):
                raise
            print(f"  {layers} layers: out of memory", flush=True)
            break
        finally:
            step = None
            common.free_memory(dev)
        points.append((layers, window.seconds / window.steps, window.samples_per_second))
    if len(points) < 2:
        return None
    n = len(points)
    mean_l = sum(p[0] for p in points) / n
    mean_t = sum(p[1] for p in points) / n
    b = sum((p[0] - mean_l) * (p[1] - mean_t) for p in points) / sum(
        (p[0] - mean_l) ** 2 for p in points
    )
    a = mean_t - b * mean_l
    fitted = batch / (a + b * s.layers)
    print(
        f"{benchmark}: s/step = {a:.4f} + {b:.4f} x layers (head and rest = {a / b:.2f} layers; "
        f"FLOPs say {s.fixed_flops() / s.layer_flops():.2f}); fit's {s.layers} layers: "
        f"{fitted:.3f} samples/s"
    )
    print(
        f"  {'layers':>6} {'s/step':>8} {'samples/s':>10} {'FLOPs-scaled':>12} {'ratio-scaled':>12}"
    )
    for layers, per_step, sps in points:
        flops = common.layer_scaled(
            sps,
            layers_run=layers,
            layers_full=s.layers,
            layer_flops=s.layer_flops(),
            fixed_flops=s.fixed_flops(),
        )
        naive = sps * layers / s.layers
        print(
            f"  {layers:>6} {per_step:>8.4f} {sps:>10.3f} {flops:>7.3f} {flops / fitted - 1:+5.0%} "
            f"{naive:>7.3f} {naive / fitted - 1:+5.0%}",
            flush=True,
        )
    return {"a": a, "b": b, "fitted": fitted, "points": points}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", choices=["cpu", "cuda"], help="default: CUDA when present")
    parser.add_argument("--full", action="store_true", help="the v5.1 logs' real sizes")
    parser.add_argument("--no-agent", action="store_true", help="probes only (no Redis needed)")
    parser.add_argument("--benchmarks", nargs="+", default=BENCHMARKS, choices=BENCHMARKS)
    parser.add_argument("--precision", choices=["bf16", "fp32"], default="bf16")
    parser.add_argument("--max-seconds", type=float, default=120.0, help="per probe")
    parser.add_argument("--jobs", type=int, default=5, help="agent jobs per benchmark")
    parser.add_argument(
        "--broker",
        default=os.environ.get("BENCH_BROKER_URL", "redis://127.0.0.1:6379/4"),
    )
    parser.add_argument("--json", help="write every figure to this file")
    parser.add_argument(
        "--scaling",
        action="store_true",
        help="instead: check the layer scaling of the language models at several depths (CUDA)",
    )
    args = parser.parse_args()

    if args.scaling:
        from agent.probes import TYPICAL

        depths = {"llama31_8b": [1, 2, 3, 4, 5], "llama2_70b_lora": [2, 4, 8, 12, 15]}
        fits = {
            b: scaling_check(b, TYPICAL[b], args.device, depths[b])
            for b in args.benchmarks
            if b in depths
        }
        if args.json:
            with open(args.json, "w") as f:
                json.dump(fits, f, indent=1)
        return 0

    from agent.probes import TYPICAL

    shapes = TYPICAL if args.full else QUICK
    print(f"Probes, called directly ({'--full: the logs sizes' if args.full else 'quick sizes'})")
    print_head()
    rows = []
    for benchmark in args.benchmarks:
        rows.append(
            run_direct(benchmark, shapes[benchmark], args.device, args.precision, args.max_seconds)
        )
        print_row(rows[-1])
    print()
    overhead = None if args.no_agent else agent_overhead(args, shapes)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"probes": rows, "agent": overhead}, f, indent=1, default=str)
    return 1 if any("error" in r for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
