#!/usr/bin/env python
"""Ingest the whole v5.1 round and compare with the floor: decompress and read every byte.

Two ways of ingesting, each timed against the floor measured in the same run:

- eager: `manage.py ingest` in one process with tasks in-process (CELERY_TASK_ALWAYS_EAGER=1)
  on a fresh SQLite database, i.e. the work one worker does, with no queue in between.
- worker: the way the portal ingests. A real `celery -A portal worker` (prefork, --concurrency
  = os.cpu_count(), -Q ingest,checks,celery) is started and ready before the clock starts; then
  `manage.py ingest <tarball> --round training-v5.1 --wait` runs as a child process, timed from
  its start until it returns, i.e. until every submission is final. On PostgreSQL (a database
  created and dropped for the run) and Redis (a database flushed first) when they answer, else on
  SQLite and the file-system Celery transport under the temp folder; the output says which.

Prints wall time, MB/s (unpacked bytes), peak RSS of each stage (for the worker pipeline, the
command's own and the worker's process tree, read from VmHWM just before the worker is stopped),
the worker pipeline's CPU time and the floor's (less noisy than wall time on a shared machine),
and what the database holds afterwards: every submission final and every run checked, or the
bench exits non-zero. In v5.1 one submission (University of Florida) is invalid by the rules, so
`--wait` exits 1 saying "1 of 19 submissions did not pass": that verdict is expected, not a failure.
Targets: the worker pipeline within 3.5x of the floor (issue 27); peak RSS under 500 MB per process.

The floor is measured before each ingest and after the last, and each ingest's ratio is to the mean of the
two floors around it: this machine's speed drifts by tens of percent within minutes. With --repeat N the
ingests run N times and the median ratio is printed as well.

    bench/ingest.py [--only eager|worker] [--repeat N]     (default: both, once)
"""

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bin"))
from services import answers  # noqa: E402 (bin/services.py)

SHARED = Path(os.environ.get("MLPERF_SHARED_DIR", ROOT.parent / "shared" / "mlperf"))
TARBALL = SHARED / "training_v5.1_results.tar.xz"
ROUND = "training-v5.1"
PG = os.environ.get(
    "BENCH_PG", "postgres://postgres@127.0.0.1:5432"
)  # a server; the database is ours
# Flushed before use: a database that make test (8-15, bin/run_tests.py) does not use.
REDIS = os.environ.get("BENCH_REDIS_INGEST", "redis://127.0.0.1:6379/7")
MANAGE = [sys.executable, "manage.py"]
EXPECTED = {"submissions": 19, "runs": 1669}  # as tests/checking/test_shared_rounds.py counts them
VERIFY = """
import json
from collections import Counter
from leaderboard.models import Run
from submissions.models import Submission
rows = list(Submission.objects.all())
print(json.dumps({
    "submissions": len(rows), "final": sum(s.is_final for s in rows),
    "statuses": dict(Counter(s.status for s in rows)),
    "runs": Run.objects.count(), "checked": Run.objects.filter(checked=True).count(),
}))
"""


def floor() -> int:
    """Decompress the tarball and read every member's bytes; return the unpacked byte count."""
    total = 0
    with tarfile.open(TARBALL, "r|xz") as tar:
        for member in tar:
            if member.isfile():
                f = tar.extractfile(member)
                while chunk := f.read(1 << 20):
                    total += len(chunk)
    return total


def timed_child(
    args, env, output: Path, watch: subprocess.Popen | None = None
) -> tuple[float, float, int, tuple]:
    """Run a child process (stdout and stderr to `output`); return (wall seconds, that child's own
    peak RSS in MB, exit code, its (user, system) CPU seconds). With `watch` (the worker), stop the
    child and fail if that exits first."""
    with open(output, "w") as out:
        start = time.perf_counter()
        child = subprocess.Popen(args, env=env, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT)
        try:
            while True:
                pid, status, usage = os.wait4(child.pid, 0 if watch is None else os.WNOHANG)
                if pid:
                    break
                if watch.poll() is not None:
                    raise SystemExit(
                        f"the worker exited (code {watch.returncode}) before {args[2]} returned"
                    )
                time.sleep(0.01)
        except BaseException:
            child.kill()
            child.wait()
            raise
        wall = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    return wall, usage.ru_maxrss / 1024, child.returncode, (usage.ru_utime, usage.ru_stime)


def tail(path: Path, lines: int = 15) -> str:
    return "\n".join(
        "    " + line for line in path.read_text(errors="replace").splitlines()[-lines:]
    )


def run(args, env, log: Path):
    """Run a set-up step; on failure stop with its output."""
    with open(log, "a") as out:
        done = subprocess.run(args, env=env, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT)
    if done.returncode:
        raise SystemExit(
            f"{' '.join(map(str, args))} failed with exit code {done.returncode}:\n{tail(log)}"
        )


def prepare(env, log: Path):
    run(MANAGE + ["migrate", "-v0"], env, log)
    run(MANAGE + ["load_rounds"], env, log)


def verify(env, log: Path) -> dict:
    """What the database holds after the ingest: submissions, their statuses, runs checked."""
    done = subprocess.run(
        MANAGE + ["shell", "-c", VERIFY], env=env, cwd=ROOT, capture_output=True, text=True
    )
    if done.returncode:
        raise SystemExit(f"reading the database failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def judge(name: str, code: int, counts: dict, output: Path) -> list[str]:
    """Problems with one ingest: the command failed, or the database is not what the round gives."""
    problems = []
    if code:
        last = output.read_text(errors="replace").strip().splitlines()[-1:] or [""]
        rejected = counts["statuses"].get("invalid", 0)
        # --wait exits 1 when a submission is invalid; that is the round's verdict, not a failure.
        if not (
            code == 1
            and last[0].endswith(f"{rejected} of {counts['submissions']} submissions did not pass.")
        ):
            problems.append(f"{name}: the ingest command exited with code {code}:\n{tail(output)}")
    if counts["final"] != counts["submissions"]:
        problems.append(
            f"{name}: {counts['submissions'] - counts['final']} submissions are not final"
        )
    if counts["statuses"].get("failed"):
        problems.append(
            f"{name}: {counts['statuses']['failed']} submissions failed (an error, not a verdict)"
        )
    if counts["checked"] != counts["runs"]:
        problems.append(f"{name}: {counts['runs'] - counts['checked']} runs are not checked")
    if (counts["submissions"], counts["runs"]) != (EXPECTED["submissions"], EXPECTED["runs"]):
        problems.append(
            f"{name}: expected {EXPECTED['submissions']} submissions and {EXPECTED['runs']} runs"
        )
    return problems


def _use(name: str, url: str, setup, fallback: str, notes: list) -> bool:
    """True when the service answers and setup() succeeds; otherwise a note says why `fallback` is used."""
    if not answers(url):
        notes.append(f"{name} at {url} does not answer; {fallback} used")
        return False
    try:
        setup()
        return True
    except Exception as error:  # noqa: BLE001 - say why and fall back
        notes.append(f"{name} at {url} answers but refused ({error}); {fallback} used")
        return False


def postgres(sql: str):
    import psycopg

    with psycopg.connect(f"{PG}/postgres", autocommit=True, connect_timeout=5) as conn:
        conn.execute(sql)


def redis_flush() -> None:
    import redis

    client = redis.Redis.from_url(REDIS, socket_timeout=5)
    client.flushdb()
    client.close()


def tree(pid: int) -> list[int]:
    """`pid` and its descendants, from /proc."""
    pids, todo = [], [pid]
    while todo:
        pid = todo.pop()
        pids.append(pid)
        for task in Path(f"/proc/{pid}/task").glob("*"):
            try:
                todo += [int(child) for child in (task / "children").read_text().split()]
            except OSError:
                pass
    return pids


def cpu_seconds(pid: int) -> tuple[float, float]:
    """(user, system) CPU seconds a live process has used so far, from /proc/<pid>/stat."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return 0.0, 0.0
    tick = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / tick, int(fields[12]) / tick  # utime, stime: fields 14 and 15 of stat


def machine_busy_seconds() -> float:
    """CPU seconds all processes of the machine have used (user, nice, system, irq, softirq), from /proc/stat:
    with the worker's, PostgreSQL's and Redis's share."""
    fields = Path("/proc/stat").read_text().splitlines()[0].split()[1:8]
    user, nice, system, _idle, _iowait, irq, softirq = map(int, fields)
    return (user + nice + system + irq + softirq) / os.sysconf("SC_CLK_TCK")


def peak_rss_mb(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


class Worker:
    """`celery -A portal worker`, prefork, in a session of its own so that it can be stopped whole."""

    def __init__(self, env, log: Path, concurrency: int):
        self.log_path = log
        self.log = open(log, "w")
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "portal",
                "worker",
                "-Q",
                "ingest,checks,celery",
                f"--concurrency={concurrency}",
                "--pool=prefork",
                "-n",
                f"bench-ingest-{os.getpid()}@%h",
                "--loglevel=INFO",
            ],
            cwd=ROOT,
            env=env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def wait_ready(self, timeout: float = 120):
        """Until the worker logs `<name> ready.` (its pool is up and it consumes)."""
        deadline = time.monotonic() + timeout
        while " ready." not in self.log_path.read_text(errors="replace"):
            if self.process.poll() is not None:
                raise SystemExit(
                    f"the worker exited (code {self.process.returncode}) at start-up:\n{tail(self.log_path)}"
                )
            if time.monotonic() > deadline:
                raise SystemExit(
                    f"the worker was not ready after {timeout:.0f} s:\n{tail(self.log_path)}"
                )
            time.sleep(0.1)

    def peak_rss(self) -> tuple[int, float, float]:
        """(processes, max and sum of their VmHWM in MB) over the worker's process tree, now."""
        peaks = [p for p in map(peak_rss_mb, tree(self.process.pid)) if p is not None]
        return len(peaks), max(peaks, default=0.0), sum(peaks)

    def cpu(self) -> tuple[float, float]:
        """(user, system) CPU seconds of the worker's process tree so far."""
        used = [cpu_seconds(pid) for pid in tree(self.process.pid)]
        return sum(u for u, _ in used), sum(s for _, s in used)

    def stop(self):
        """SIGTERM to the main process (a warm shutdown stops its pool), then SIGKILL to the whole group."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                pass
        try:
            os.killpg(self.process.pid, signal.SIGKILL)  # whatever is left of the group
        except ProcessLookupError:
            pass
        self.process.wait()
        self.log.close()

    def errors(self) -> list[str]:
        return [
            line
            for line in self.log_path.read_text(errors="replace").splitlines()
            if any(word in line for word in ("ERROR", "CRITICAL", "Traceback", "WorkerLostError"))
        ]


def eager(tmp: Path) -> dict:
    """The round ingested in one process, tasks in-process, on SQLite."""
    work = tmp / "eager"
    work.mkdir()
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{work}/bench.sqlite3",
        "MEDIA_ROOT": str(work / "media"),
        "CELERY_TASK_ALWAYS_EAGER": "1",
        "DJANGO_SETTINGS_MODULE": "portal.settings",
        "DEBUG": "0",
        "SECRET_KEY": "bench-only",
    }
    prepare(env, work / "setup.log")
    output = work / "ingest.log"
    wall, rss, code, _ = timed_child(
        MANAGE + ["ingest", str(TARBALL), "--round", ROUND], env, output
    )  # final on return
    counts = verify(env, work / "setup.log")
    return {
        "wall": wall,
        "rss": rss,
        "counts": counts,
        "problems": judge("eager", code, counts, output),
    }


def worker(tmp: Path) -> dict:
    """The round ingested by a real worker, timed by `ingest --wait` from start to return."""
    work = tmp / "worker"
    work.mkdir()
    env = {
        **os.environ,
        "MEDIA_ROOT": str(work / "media"),
        "CELERY_TASK_ALWAYS_EAGER": "0",
        "DJANGO_SETTINGS_MODULE": "portal.settings",
        "DEBUG": "0",
        "SECRET_KEY": "bench-only",
    }  # as deployed
    database = f"bench_ingest_{os.getpid()}"
    services, notes, created, flushed, proc = [], [], False, False, None
    try:
        created = _use(
            "PostgreSQL",
            PG,
            lambda: (
                postgres(f'DROP DATABASE IF EXISTS "{database}"'),
                postgres(f'CREATE DATABASE "{database}"'),
            ),
            "SQLite",
            notes,
        )
        if created:
            env["DATABASE_URL"] = f"{PG}/{database}"
            services.append("PostgreSQL")
        else:
            env["DATABASE_URL"] = f"sqlite:///{work}/bench.sqlite3"
            services.append("SQLite")
        flushed = _use("Redis", REDIS, redis_flush, "file-system transport", notes)
        if flushed:
            env["CELERY_BROKER_URL"] = REDIS
            services.append("Redis")
        else:
            # The file-system transport's folders (./var/broker by default) go in the temp folder.
            env.update(CELERY_BROKER_URL="filesystem://", BROKER_DIR=str(work / "broker"))
            services.append("file-system broker")
        prepare(env, work / "setup.log")

        concurrency = os.cpu_count() or 1
        proc = Worker(env, work / "worker.log", concurrency)
        proc.wait_ready()
        ready_cpu, busy = proc.cpu(), machine_busy_seconds()
        output = work / "ingest.log"
        wall, rss, code, cpu = timed_child(
            MANAGE + ["ingest", str(TARBALL), "--round", ROUND, "--wait", "--timeout", "1800"],
            env,
            output,
            watch=proc.process,
        )
        busy = machine_busy_seconds() - busy
        worker_cpu = tuple(after - before for after, before in zip(proc.cpu(), ready_cpu))
        processes, worker_max, worker_sum = proc.peak_rss()
        proc.stop()
        counts = verify(env, work / "setup.log")
        problems = judge("worker", code, counts, output)
        errors = proc.errors()
        return {
            "wall": wall,
            "rss": rss,
            "counts": counts,
            "problems": problems,
            "notes": notes,
            "services": "+".join(services),
            "concurrency": concurrency,
            "processes": processes,
            "worker_max": worker_max,
            "worker_sum": worker_sum,
            "errors": errors,
            "cpu": cpu,
            "worker_cpu": worker_cpu,
            "busy": busy,
        }
    finally:
        if proc is not None:
            proc.stop()
        if created:
            try:
                postgres(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
            except Exception as error:  # noqa: BLE001 - the run's figures stand; say what is left
                print(f"note: could not drop database {database}: {error}", file=sys.stderr)
        if flushed:
            try:
                redis_flush()
            except Exception:  # noqa: BLE001
                pass


def describe(counts: dict) -> str:
    statuses = ", ".join(f"{n} {status}" for status, n in sorted(counts["statuses"].items()))
    return (
        f"{counts['final']}/{counts['submissions']} submissions final ({statuses}), "
        f"{counts['checked']}/{counts['runs']} runs checked"
    )


def measure_floor(tmp: Path) -> tuple[float, float, int, float]:
    """(wall seconds, peak RSS in MB, unpacked bytes, CPU seconds) of the floor, in a child process like the
    ingest."""
    wall, rss, code, cpu = timed_child(
        [sys.executable, __file__, "--floor"], os.environ, tmp / "floor.out"
    )
    if code:
        raise SystemExit(f"the floor failed with exit code {code}:\n{tail(tmp / 'floor.out')}")
    return wall, rss, int((tmp / "floor.out").read_text().split()[-1]), sum(cpu)


def main() -> int:
    if not TARBALL.is_file():
        print(f"skipped: {TARBALL} is not here (set MLPERF_SHARED_DIR)")
        return 0
    if len(sys.argv) > 1 and sys.argv[1] == "--floor":
        print(floor())
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--only", choices=["eager", "worker"], help="run one of the two ingests (default: both)"
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="ingest this many times (default 1); the median ratio is printed too",
    )
    args = parser.parse_args()
    # A SIGTERM unwinds like an exception, so the worker is stopped and the database dropped.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))

    # The floor is measured before each ingest and after the last: each ingest is compared with the mean of
    # the two floors around it, as this machine's speed drifts by tens of percent within minutes.
    names = [name for name in ("worker", "eager") if args.only in (None, name)]
    runs = []  # (name, result, floor before, floor after)
    with tempfile.TemporaryDirectory(prefix="bench-ingest-") as tmp:
        tmp = Path(tmp)
        floors = [measure_floor(tmp)]
        for i in range(args.repeat):
            for name in names:
                work = tmp / f"{i}"
                work.mkdir(exist_ok=True)
                runs.append([name, (worker if name == "worker" else eager)(work)])
                # Removed once verified: each repeat wrote about 750 MB (parts, databases) to the temp folder.
                shutil.rmtree(work)
                floors.append(measure_floor(tmp))
                runs[-1] += [floors[-2][0], floors[-1][0], floors[-2][3], floors[-1][3]]
    total_bytes, floor_rss = floors[0][2], max(floor[1] for floor in floors)

    mb = total_bytes / 1e6
    print(f"v5.1 round: {TARBALL.stat().st_size / 1e6:.1f} MB compressed, {mb:.1f} MB unpacked")
    print(
        f"machine: {os.cpu_count()} CPUs (os.cpu_count()), load average {os.getloadavg()}; "
        "log parser's C scanner: "
        + (
            "built"
            if list((ROOT / "submissions/checking/logs").glob("_scan.*.so"))
            else "NOT built, the parser judges in Python (bin/build_scan.py builds it)"
        )
    )
    walls = [floor[0] for floor in floors]
    print(
        "floor (decompress + read every byte), before and after each ingest: "
        + ", ".join(f"{w:.2f}" for w in walls)
        + f" s; {mb / statistics.mean(walls):.1f} MB/s on average; "
        f"peak RSS {floor_rss:.1f} MB; CPU (user + system) "
        + ", ".join(f"{floor[3]:.2f}" for floor in floors)
        + " s"
    )
    ratios: dict[str, list[float]] = {name: [] for name in names}
    for name, r, before, after, cpu_before, cpu_after in runs:
        base = (before + after) / 2
        base_cpu = (cpu_before + cpu_after) / 2
        ratio = r["wall"] / base
        ratios[name].append(ratio)
        if name == "worker":
            label = f"ingest, worker x{r['concurrency']} ({r['services']}):"
            print(
                f"{label:38s} {r['wall']:6.2f} s  {mb / r['wall']:6.1f} MB/s  ratio {ratio:.2f}x to the floor "
                f"{base:.2f} s  [ingest --wait as a child, start to return]"
            )
            print(
                f"  peak RSS: ingest command {r['rss']:.1f} MB; worker tree ({r['processes']} processes, VmHWM "
                f"read before the stop) max {r['worker_max']:.1f} MB, sum {r['worker_sum']:.1f} MB"
            )
            print(
                f"  CPU (user + system): ingest command {sum(r['cpu']):.2f} s ({r['cpu'][1]:.2f} system); worker "
                f"tree {sum(r['worker_cpu']):.2f} s ({r['worker_cpu'][1]:.2f} system), counted from when it was "
                f"ready; whole machine {r['busy']:.2f} s (with PostgreSQL and Redis); command and worker tree "
                f"{(sum(r['cpu']) + sum(r['worker_cpu'])) / base_cpu:.2f}x the floor's {base_cpu:.2f} s"
            )
            for note in r["notes"]:
                print(f"  note: {note}")
            if r["errors"]:
                print(
                    f"  worker log: {len(r['errors'])} error lines, the first: {r['errors'][0][:200]}"
                )
        else:
            print(
                f"ingest, eager (SQLite, one process):  {r['wall']:6.2f} s  {mb / r['wall']:6.1f} MB/s  "
                f"peak RSS {r['rss']:6.1f} MB  ratio {ratio:.2f}x to the floor {base:.2f} s  [eager: one process, SQLite]"
            )
        print(f"  database after: {describe(r['counts'])}")
    summary = []
    for name, values in ratios.items():
        what = (
            ("worker pipeline", "target <= 3.5x: the way the portal ingests")
            if name == "worker"
            else ("eager", "one worker's work, no queue: for reference")
        )
        spread = (
            f" (median of {len(values)}: " + ", ".join(f"{v:.2f}" for v in values) + ")"
            if len(values) > 1
            else ""
        )
        summary.append(f"{what[0]} {statistics.median(values):.2f}x{spread} ({what[1]})")
    print(
        f"ratio ingest / floor, same run: {'; '.join(summary)}; peak RSS target < 500 MB per process"
    )
    problems = [p for _, r, *_ in runs for p in r["problems"]]
    for problem in problems:
        print(f"FAILED: {problem}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
