"""What an agent announces about its host, and the job state its processes share.

`describe()` reads the accelerator from torch.cuda. The worker's main process must not start
CUDA (a forked pool process could not use it after), so the pool process calls it, as it loads
torch for the probes; `python -m agent.host` prints it too.

`State` is a small anonymous shared memory map made at import, before the worker forks its pool
process: the pool process writes the host's description, the current job and the counters, the
main process writes its name and queues, and either sends a heartbeat from them (a killed pool
process is replaced by a fresh fork of the main one, which sees the same map).
"""

import json
import mmap
import os
import re
import struct
import subprocess


def describe() -> dict:
    """Accelerator model, count and memory, driver, CUDA and torch versions; "CPU" without CUDA."""
    try:
        import torch
    except ImportError as error:
        return {"accelerator": "CPU", "accelerator_count": 0, "torch": None, "error": str(error)}
    info = {
        "accelerator": "CPU",
        "accelerator_count": 0,
        "memory_bytes": _host_memory(),
        "driver": None,
        "cuda": torch.version.cuda,
        "torch": torch.__version__,
    }
    if torch.cuda.is_available():
        info.update(
            accelerator=torch.cuda.get_device_name(0),
            accelerator_count=torch.cuda.device_count(),
            memory_bytes=torch.cuda.get_device_properties(0).total_memory,
            driver=_driver(),
        )
    return info


def _host_memory() -> int | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        return None


def _driver() -> str | None:
    """The NVIDIA kernel driver's version: /proc on Linux, else nvidia-smi."""
    try:
        with open("/proc/driver/nvidia/version") as f:
            found = re.search(r"Kernel Module\s+(?:for \S+\s+)?([\d.]+)", f.read())
            if found:
                return found.group(1)
    except OSError:
        pass
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=20,
        ).stdout.split()
        return out[0] if out else None
    except (OSError, subprocess.SubprocessError):
        return None


class State:
    """Jobs done, jobs failed, the current job's uid, and two JSON parts of the heartbeat (the
    worker's name and queues, the host's description), shared between the worker's processes.
    Torn reads are harmless: the next heartbeat corrects them."""

    # The layout: done, failed, current job at 0; the last job that took a pool process down and
    # how often at _LOST_AT; then each JSON part in its [start, end).
    _HEAD = struct.Struct("<II40s")
    _LOST = struct.Struct("<I40s")
    _LOST_AT = _HEAD.size
    _PARTS = {"worker": (128, 4096), "host": (4096, 16384)}
    assert _LOST_AT + _LOST.size <= _PARTS["worker"][0]

    def __init__(self):
        self._map = mmap.mmap(-1, 16384)  # anonymous and MAP_SHARED: inherited by forks

    def _head(self):
        return self._HEAD.unpack_from(self._map, 0)

    def _write(self, done, failed, current):
        self._HEAD.pack_into(self._map, 0, done, failed, (current or "").encode()[:40])

    def start(self, job: str | None) -> None:
        done, failed, _ = self._head()
        self._write(done, failed, job or "?")

    def finish(self, ok: bool) -> None:
        done, failed, _ = self._head()
        self._write(done + ok, failed + (not ok), "")

    def lost(self, job: str | None) -> int:
        """The pool process died running `job` (killed, out of memory): count it failed and no
        longer current; returns how many pool processes it has taken down here in a row."""
        self.finish(ok=False)
        times, last = self._LOST.unpack_from(self._map, self._LOST_AT)
        key = (job or "").encode()[:40]
        times = times + 1 if last.rstrip(b"\0") == key else 1
        self._LOST.pack_into(self._map, self._LOST_AT, times, key)
        return times

    def times_lost(self, job: str | None) -> int:
        times, last = self._LOST.unpack_from(self._map, self._LOST_AT)
        return times if job and last.rstrip(b"\0") == job.encode()[:40] else 0

    def snapshot(self) -> dict:
        done, failed, current = self._head()
        current = current.rstrip(b"\0").decode(errors="replace")
        return {"current_job": current or None, "jobs_done": done, "jobs_failed": failed}

    def set_part(self, name: str, value: dict) -> None:
        start, end = self._PARTS[name]
        data = json.dumps(value).encode()[: end - start - 1]
        self._map[start : start + len(data) + 1] = data + b"\0"

    def part(self, name: str) -> dict | None:
        start, end = self._PARTS[name]
        raw = self._map[start:end].split(b"\0", 1)[0]
        try:
            return json.loads(raw) if raw else None
        except ValueError:  # caught mid-write
            return None


if __name__ == "__main__":
    print(json.dumps(describe()))
