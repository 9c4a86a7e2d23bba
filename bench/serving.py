"""The portal under gunicorn on loopback, for the benchmarks that load it over HTTP; and Debian's nginx in
front of it as the README deploys it (deploy/nginx.conf), for the benchmarks and the tests alike."""

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve(
    env: dict,
    workers: int,
    port: int | None = None,
    *,
    ready_path: str = "/",
    timeout_s: int = 30,
    cwd: Path = ROOT,
) -> tuple[subprocess.Popen, str]:
    """gunicorn with `workers` sync processes on loopback, once `ready_path` answers; its process (the
    leader of its own process group) and base URL. `timeout_s`: gunicorn's limit on one request; `cwd`:
    the checkout it serves (another one: the code before a change, measured beside this one's)."""
    port = port or free_port()
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gunicorn",
            "portal.wsgi:application",
            "-b",
            f"127.0.0.1:{port}",
            "-w",
            str(workers),
            "--timeout",
            str(timeout_s),
            "--log-level",
            "warning",
        ],
        cwd=cwd,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    for _ in range(150):
        try:
            with urllib.request.urlopen(base + ready_path, timeout=5) as response:
                response.read()
            break
        except OSError:
            time.sleep(0.2)
    return server, base


def nginx(folder: Path, port: int, upstream: int, log) -> subprocess.Popen:
    """deploy/nginx.conf in the foreground, listening on loopback's `port` and passing to gunicorn on
    `upstream`, with its files (pid, temporary bodies) under `folder`; the leader of its own process group.
    Its workers run as nobody: `folder` must be readable to them."""
    conf = (ROOT / "deploy" / "nginx.conf").read_text()
    conf = conf.replace("listen 80;", f"listen 127.0.0.1:{port};")
    conf = conf.replace("server 127.0.0.1:8000;", f"server 127.0.0.1:{upstream};")
    (folder / "var").mkdir(parents=True, exist_ok=True)
    (folder / "nginx.conf").write_text(conf)
    return subprocess.Popen(
        ["nginx", "-p", str(folder), "-c", "nginx.conf", "-g", "daemon off;"],
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def cpu_seconds(server: subprocess.Popen) -> float:
    """User and system CPU seconds spent so far by the processes of `server`'s group (gunicorn and its
    workers), from /proc: steadier than wall time on a loaded machine."""
    total, tick = 0, os.sysconf("SC_CLK_TCK")
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == server.pid:  # its process group
            total += int(fields[11]) + int(fields[12])
    return total / tick


def stop(server: subprocess.Popen) -> None:
    os.killpg(server.pid, 15)
    server.wait(timeout=30)
