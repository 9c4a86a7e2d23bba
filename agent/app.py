"""The agent's Celery app: `celery -A agent.app worker -Q gpu,gpu.<family queue> --concurrency 1
--prefetch-multiplier 1` on a GPU host (agent/README.md has the contract with the portal).

It needs the broker only (AGENT_BROKER_URL, else CELERY_BROKER_URL): no database, no Django, nothing
of the portal. It takes `agent.reference_check` jobs, runs the probe (agent/probes) and answers by
sending the portal's task `submissions.store_reference_check` by name to the job's reply queue; it
announces itself with `submissions.agent_heartbeat` on start and every AGENT_HEARTBEAT_S seconds.

The app is never made Celery's current or default app (set_as_current=False), so that a process
of the portal that imports this module keeps sending its own tasks to its own broker; its worker
signals and steps act only for this app. torch is imported by the job, in the pool process: the
worker's main process never starts CUDA, which a forked pool process could not use after.
"""

import logging
import os
import threading
import time

from billiard.exceptions import WorkerLostError
from celery import Celery, bootsteps, signals
from celery.exceptions import SoftTimeLimitExceeded
from celery.worker.request import Request

from .host import State, describe

log = logging.getLogger(__name__)


def _env_float(name: str, default: float) -> float:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = float(raw)
    except ValueError:
        raise SystemExit(f"{name} must be a number of seconds, not {raw!r}") from None
    if not value > 0:
        raise SystemExit(f"{name} must be positive, not {raw!r}")
    return value


BROKER_URL = (
    os.environ.get("AGENT_BROKER_URL")
    or os.environ.get("CELERY_BROKER_URL")
    or "redis://127.0.0.1:6379/0"
)
HEARTBEAT_S = _env_float("AGENT_HEARTBEAT_S", 15)
# Where heartbeats go (a job's answer goes to its own reply_queue).
HEARTBEAT_QUEUE = os.environ.get("AGENT_HEARTBEAT_QUEUE", "checks")
# A job that does not say how long it may take.
DEFAULT_MAX_SECONDS = _env_float("AGENT_MAX_SECONDS", 600)
# Beyond the job's max_seconds (which bounds the probe's warm-up and timed window): building the
# model and finding how many layers fit. Then the soft limit stops the probe with an answer, and
# the hard limit, KILL_AFTER_S later, kills a pool process stuck in a kernel.
GRACE_S = _env_float("AGENT_GRACE_S", 120)
KILL_AFTER_S = 30
# The first heartbeat waits this long for the pool process to describe the host (it imports torch).
DESCRIBE_WAIT_S = 120

# A job whose probe kills the pool process (out of host memory, a crash in a kernel) is queued
# again by Celery; after this many times on one agent it is answered with an error instead.
MAX_LOST = int(_env_float("AGENT_MAX_LOST", 2))

TASK = "agent.reference_check"
STORE_TASK = "submissions.store_reference_check"
HEARTBEAT_TASK = "submissions.agent_heartbeat"

# No fixups: Celery's Django fixup would set Django up in the agent wherever
# DJANGO_SETTINGS_MODULE happens to be set.
app = Celery("agent", broker=BROKER_URL, set_as_current=False, fixups=[])
app.conf.update(
    task_acks_late=True,
    task_reject_on_worker_lost=True,
    worker_prefetch_multiplier=1,
    worker_concurrency=1,
    task_serializer="json",
    accept_content=["json"],
    task_ignore_result=True,
    broker_connection_retry_on_startup=True,
    # Redis hands an unacknowledged job to another agent after this long: longer than any job.
    broker_transport_options={
        "visibility_timeout": int(_env_float("AGENT_VISIBILITY_TIMEOUT", 2 * 3600))
    },
    worker_proc_alive_timeout=60,  # a pool process's start on a busy host
    worker_hijack_root_logger=False,
)

STATE = State()


def job_seconds(job) -> float:
    """The job's max_seconds when it is a positive number, else the default."""
    seconds = job.get("max_seconds") if isinstance(job, dict) else None
    if isinstance(seconds, bool) or not isinstance(seconds, int | float) or not seconds > 0:
        return DEFAULT_MAX_SECONDS
    return min(float(seconds), 24 * 3600.0)


class JobRequest(Request):
    """A job's time limits from its own max_seconds (unless the sender set limits), and an answer
    to the portal when the hard limit kills the pool process (the job cannot send one then)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if not any(self.time_limits or ()):
            seconds = job_seconds(self._job()) + GRACE_S
            self.time_limits = (seconds + KILL_AFTER_S, seconds)

    def _job(self):
        args = self.args
        return args[0] if isinstance(args, list | tuple) and args else None

    def on_failure(self, exc_info, send_failed_event=True, return_ok=False):
        exc = getattr(exc_info, "exception", None)
        exc = getattr(exc, "exc", exc)  # ExceptionWithTraceback
        if isinstance(exc, WorkerLostError):
            # Celery queues the job again (reject_on_worker_lost); the heartbeat must not go on
            # saying it runs, and the job is refused once it has taken down two pool processes.
            job = self._job()
            STATE.lost(str(job.get("check")) if isinstance(job, dict) else None)
        return super().on_failure(exc_info, send_failed_event, return_ok)

    def on_timeout(self, soft, timeout):
        super().on_timeout(soft, timeout)
        if soft:
            return
        STATE.finish(ok=False)
        job = self._job()
        reply(
            job,
            self.hostname,
            error=f"the probe was killed after its hard time limit of {timeout:g} s",
        )


def reply(job, hostname: str, *, measurement: dict | None = None, error: str | None = None):
    """Send the outcome to the portal's task, by name, on the job's reply queue."""
    job = job if isinstance(job, dict) else {}
    payload = {"check": job.get("check"), "agent": hostname}
    if error is not None:
        payload["error"] = error
    else:
        payload["measurement"] = measurement
    queue = job.get("reply_queue")
    queue = queue if isinstance(queue, str) and queue else HEARTBEAT_QUEUE
    app.send_task(STORE_TASK, args=[payload], queue=queue)


def heartbeat() -> bool:
    """Announce this agent: the worker's name and queues, the host, the shared job state. False
    (nothing sent) until both processes have written their parts."""
    worker, host = STATE.part("worker"), STATE.part("host")
    if worker is None or host is None:
        return False
    app.send_task(
        HEARTBEAT_TASK,
        args=[{**worker, **host, **STATE.snapshot()}],
        queue=HEARTBEAT_QUEUE,
        # A backlog of old heartbeats must not make a dead agent look alive when it drains.
        expires=max(60.0, 4 * HEARTBEAT_S),
    )
    return True


def _safe_heartbeat() -> bool:
    try:
        return heartbeat()
    except Exception as error:  # the broker away: the next beat tries again
        log.warning("heartbeat not sent: %s", error)
        return True


def run_job(job) -> dict:
    """Check the job's fields and run its probe; ProbeError says what is wrong."""
    try:
        from .probes import ProbeError, run_probe
    except ImportError as error:
        raise RuntimeError(f"this agent cannot import PyTorch: {error}") from None
    if not isinstance(job, dict):
        raise ProbeError("the job is not a JSON object")
    benchmark = job.get("benchmark")
    if not isinstance(benchmark, str):
        raise ProbeError("no probe for this benchmark")
    precision = job.get("precision") or "bf16"
    return run_probe(
        benchmark,
        batch_size=job.get("batch_size"),
        seq_len=job.get("seq_len"),
        precision=precision,
        device=os.environ.get("AGENT_DEVICE") or None,
        max_seconds=job_seconds(job),
    )


@app.task(name=TASK, bind=True, Request=JobRequest)
def reference_check(self, job):
    """One reference check: the probe's measurement, or the reason it has none, sent to the portal."""
    hostname = self.request.hostname
    check = job.get("check") if isinstance(job, dict) else None
    if STATE.times_lost(str(check) if check else None) >= MAX_LOST:
        times = "once" if MAX_LOST == 1 else f"{MAX_LOST} times"
        reply(job, hostname, error=f"the probe took this agent's pool process down {times}")
        return
    STATE.start(str(check) if check else None)
    _safe_heartbeat()  # the portal marks the check running on this agent
    if _preloading is not None:  # a job that comes first must not share the process with it
        _preloading.join(GRACE_S)
    measurement = error = None
    try:
        measurement = run_job(job)
    except SoftTimeLimitExceeded:
        limit = (self.request.timelimit or (None, None))[1] or job_seconds(job) + GRACE_S
        error = f"the probe ran past its limit of {limit:g} s"
    except Exception as exc:
        from .probes import ProbeError

        if isinstance(exc, ProbeError):
            error = str(exc)
        else:
            log.exception("reference check %s failed", check)
            error = f"{type(exc).__name__}: {exc}"[:2000]
    finally:
        STATE.finish(ok=error is None)
    reply(job, hostname, measurement=measurement, error=error)
    _safe_heartbeat()


class Heartbeat(bootsteps.StartStopStep):
    """In the worker's main process: beat from the start (as soon as the pool process has described
    the host) and every HEARTBEAT_S until the worker stops."""

    def __init__(self, worker, **kwargs):
        self._stop = threading.Event()

    def start(self, worker):
        queues = sorted(worker.app.amqp.queues.consume_from or worker.app.amqp.queues)
        STATE.set_part("worker", {"hostname": worker.hostname, "queues": queues})
        threading.Thread(target=self._run, name="agent-heartbeat", daemon=True).start()

    def _run(self):
        deadline = time.monotonic() + DESCRIBE_WAIT_S
        while not _safe_heartbeat():  # the first: once the pool process has described the host
            if time.monotonic() > deadline:
                STATE.set_part("host", {"accelerator": "unknown", "accelerator_count": 0})
            if self._stop.wait(0.2):
                return
        while not self._stop.wait(HEARTBEAT_S):
            _safe_heartbeat()

    def stop(self, worker):
        self._stop.set()


app.steps["worker"].add(Heartbeat)


_preloading: threading.Thread | None = None


def preload() -> None:
    """In the pool process: import torch and the probes, describe the host, start CUDA and run one
    step of a CPU miniature; the first probe of a process otherwise pays seconds of one-time set-up
    (3.8 s of a 4.3 s first job on a CPU here)."""
    try:
        STATE.set_part("host", describe())
        from .probes import run_probe

        run_probe("llama31_8b", batch_size=1, device="cpu", warmup_steps=1, steps=1)
        import torch

        if torch.cuda.is_available():
            torch.zeros(1, device="cuda")
    except Exception as error:  # the job will say what is wrong
        log.warning("the probes could not be preloaded: %s", error)


@signals.worker_process_init.connect
def _preload_in_pool_process(**kwargs):
    """Preload while the pool process waits for its first job, not during it (only in this app's
    workers: the signal is global)."""
    from celery import current_app

    global _preloading
    if current_app._get_current_object() is app:
        _preloading = threading.Thread(target=preload, name="agent-preload", daemon=True)
        _preloading.start()
