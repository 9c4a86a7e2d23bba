"""The agent's Celery app (agent/app.py): what it imports, what it leaves alone in the portal, and
the messages a real agent worker sends (its contract with the portal's tasks)."""

import importlib.util
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from ..conftest import ROOT


def python(code: str, **env) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_agent_app_imports_no_django_no_portal_and_no_torch():
    # An agent host has no Django (requirements-agent.txt): it is made unimportable here, with the
    # portal's apps, so that any import of them fails (kombu's optional one of Django is caught).
    done = python(
        "import sys\n"
        "BANNED = {'django', 'portal', 'leaderboard', 'submissions', 'accounts', 'audit'}\n"
        "class Ban:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in BANNED: raise ImportError(f'{name} imported')\n"
        "sys.meta_path.insert(0, Ban())\n"
        "import agent.app\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & (BANNED | {'torch'})))",
        DJANGO_SETTINGS_MODULE="portal.settings",
    )
    assert done.returncode == 0, done.stderr
    # torch neither: the worker's main process must not start CUDA before it forks its pool process.
    assert done.stdout.strip() == "[]"


def test_importing_the_agent_app_leaves_the_portal_s_celery_app_current():
    done = python(
        "import django; django.setup()\n"
        "import celery\n"
        "from portal.celery import app as portal\n"
        "from submissions.checking import tasks\n"
        "import agent.app\n"
        "assert celery.current_app._get_current_object() is portal, celery.current_app.main\n"
        "assert tasks.sweep.app is portal\n"
        "assert agent.app.app is not portal and agent.app.app.main == 'agent'\n"
        "print('ok')",
        DJANGO_SETTINGS_MODULE="portal.settings",
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


def test_a_job_s_time_limit_comes_from_its_max_seconds():
    from agent import app

    assert app.job_seconds({"max_seconds": 90}) == 90
    for bad in ({"max_seconds": -1}, {"max_seconds": "9"}, {"max_seconds": True}, {}, None):
        assert app.job_seconds(bad) == app.DEFAULT_MAX_SECONDS


class Agent:
    """A real `celery -A agent.app worker` on Redis, on private queues that this test consumes."""

    def __init__(self, broker: str, log: Path, **env):
        tag = uuid.uuid4().hex[:8]
        self.jobs, self.replies = f"test-gpu-{tag}", f"test-checks-{tag}"
        self.name = f"agent-{tag}"
        self.log = open(log, "w")
        env = dict(
            os.environ,
            AGENT_BROKER_URL=broker,
            AGENT_HEARTBEAT_QUEUE=self.replies,
            AGENT_HEARTBEAT_S="2",
            AGENT_DEVICE="cpu",
            **env,
        )
        self.process = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "agent.app", "worker", "-Q", self.jobs]
            + ["--concurrency", "1", "--prefetch-multiplier", "1", "-n", f"{self.name}@%h"]
            + ["--without-mingle", "--without-gossip", "--loglevel=INFO"],
            cwd=ROOT,
            env=env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        from agent.app import app

        self.app = app
        self.connection = app.connection_for_write(broker)
        self.queue = self.connection.SimpleQueue(self.replies, accept=["json"])

    def send(self, limits=None, **job):
        self.app.send_task(
            "agent.reference_check",
            args=[{"reply_queue": self.replies, **job}],
            queue=self.jobs,
            **(limits or {}),
        )

    def next(self, task: str, where=lambda body: True, timeout: float = 90):
        """The next message of `task` on the reply queue for which `where` holds."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and self.process.poll() is None:
            try:
                message = self.queue.get(block=True, timeout=1)
            except self.queue.Empty:
                continue
            message.ack()
            body = message.payload[0][0]
            if message.headers["task"] == task and where(body):
                return body
        pytest.fail(f"no {task} from the agent; its log: {Path(self.log.name).read_text()[-3000:]}")

    def pool_process(self) -> int:
        """The pid of the worker's pool process (the main process's child)."""
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = stat.read_text().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if int(fields[1]) == self.process.pid:
                return int(stat.parent.name)
        pytest.fail("the agent has no pool process")

    def stop(self):
        os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
        for name in (self.jobs, self.replies):
            self.connection.default_channel.queue_delete(name)
        self.connection.release()
        self.log.close()


@pytest.fixture
def start_agent(settings, tmp_path):
    if importlib.util.find_spec("torch") is None:  # the worker imports it, not this process
        pytest.skip("PyTorch is not installed (requirements-agent.txt)")
    if not settings.CELERY_BROKER_URL.startswith("redis://"):
        pytest.skip(f"needs a Redis broker (CELERY_BROKER_URL is {settings.CELERY_BROKER_URL})")
    workers = []

    def start(**env):
        workers.append(Agent(settings.CELERY_BROKER_URL, tmp_path / "agent.log", **env))
        return workers[-1]

    yield start
    for worker in workers:
        worker.stop()


@pytest.fixture
def agent(start_agent):
    return start_agent()


def test_an_agent_announces_itself_measures_and_answers_the_portal_s_tasks(agent):
    beat = agent.next("submissions.agent_heartbeat")
    assert beat["hostname"].startswith(agent.name + "@")
    assert beat["queues"] == [agent.jobs]
    assert beat["accelerator"] == "CPU" or beat["accelerator_count"] >= 1
    assert beat["torch"] and {"memory_bytes", "driver", "cuda"} <= set(beat)
    assert (beat["current_job"], beat["jobs_done"], beat["jobs_failed"]) == (None, 0, 0)

    check = str(uuid.uuid4())
    agent.send(check=check, benchmark="resnet", batch_size=256, seq_len=None, precision="bf16")
    agent.next("submissions.agent_heartbeat", lambda b: b["current_job"] == check)
    answer = agent.next("submissions.store_reference_check")
    assert answer["check"] == check and answer["agent"] == beat["hostname"]
    assert "error" not in answer
    measurement = answer["measurement"]
    assert measurement["benchmark"] == "resnet" and measurement["cpu"] is True
    assert measurement["samples_per_second_per_accelerator"] > 0

    other = str(uuid.uuid4())
    agent.send(check=other, benchmark="bert", batch_size=8, seq_len=None, precision="bf16")
    answer = agent.next("submissions.store_reference_check")
    assert answer == {
        "check": other,
        "agent": beat["hostname"],
        "error": "no probe for this benchmark",
    }
    after = agent.next("submissions.agent_heartbeat", lambda b: b["jobs_failed"] == 1)
    assert (after["current_job"], after["jobs_done"]) == (None, 1)

    # Limits the sender sets win over the job's own (max_seconds + AGENT_GRACE_S): past the soft
    # one the probe stops and says so; past the hard one the pool process is killed and the main
    # process answers for it.
    job = {"benchmark": "retinanet", "batch_size": 2, "seq_len": None, "precision": "bf16"}
    slow = str(uuid.uuid4())
    agent.send(check=slow, limits={"soft_time_limit": 0.05}, **job)
    answer = agent.next("submissions.store_reference_check")
    assert answer["check"] == slow and answer["error"] == "the probe ran past its limit of 0.05 s"
    stuck = str(uuid.uuid4())
    agent.send(check=stuck, limits={"time_limit": 0.1}, **job)
    answer = agent.next("submissions.store_reference_check")
    assert answer["check"] == stuck
    assert answer["error"] == "the probe was killed after its hard time limit of 0.1 s"


def test_a_job_that_takes_the_pool_process_down_is_queued_again_then_refused(start_agent):
    # AGENT_CPU_MIN_WINDOW_S keeps the probe running until it is killed.
    agent = start_agent(AGENT_CPU_MIN_WINDOW_S="60", AGENT_MAX_LOST="1")
    agent.next("submissions.agent_heartbeat")
    check = str(uuid.uuid4())
    agent.send(check=check, benchmark="resnet", batch_size=2, seq_len=None, precision="bf16")
    agent.next("submissions.agent_heartbeat", lambda b: b["current_job"] == check)
    os.kill(agent.pool_process(), signal.SIGKILL)  # as the kernel's out-of-memory killer would

    answer = agent.next("submissions.store_reference_check")
    assert answer["check"] == check
    assert answer["error"] == "the probe took this agent's pool process down once"
    beat = agent.next("submissions.agent_heartbeat")
    assert (beat["current_job"], beat["jobs_done"], beat["jobs_failed"]) == (None, 0, 1)


def test_the_shared_state_keeps_its_parts_apart():
    from agent.host import State

    state = State()
    state.set_part("worker", {"hostname": "a@h", "queues": ["gpu"]})
    state.set_part("host", {"accelerator": "CPU"})
    state.start("c" * 36)
    assert state.lost("c" * 36) == 1 and state.lost("c" * 36) == 2
    assert state.times_lost("c" * 36) == 2 and state.times_lost("other") == 0
    assert state.snapshot() == {"current_job": None, "jobs_done": 0, "jobs_failed": 2}
    assert state.part("worker") == {"hostname": "a@h", "queues": ["gpu"]}
    assert state.part("host") == {"accelerator": "CPU"}
