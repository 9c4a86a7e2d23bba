"""The adapter to mlperf-logging: the one module that imports it and reaches inside it.

mlperf-logging is written as command-line tools: module-global state, files read by name, reports through
`logging` and `print`. We call its lower-level pieces inside the worker process instead; everything of it
that is not a command-line entry point is named here alone, and tests/checking/rules/test_mlperf_adapter.py
pins each piece, so that a new version of the library that changes one fails there, not in a worker:

- log_parser: one ruleset's log line parser (its record marker, string_to_logline, LogLine), which
  compliance.py reads lines with;
- compliance_checker: its ComplianceChecker, with our config queue (only its own config files), its
  messages read from the checker's stores instead of its log output;
- rcp_table and read_submission_file: its RCP_Checker without its writes of scaling.json, asked for the
  RCP records by name (its private `_find_*` methods), and its reader of one run;
- check_system_desc: its system description checker.

Module attributes are swapped, only for the duration of one call and always put back. Workers are
processes (Celery prefork), never threads, so no other code runs while a swap is in place.

- compliance_run: mlp_compliance's config queue is the checker's own (`enqueue_config`: config names are
  checked against mlperf-logging's own files); its YAML files are parsed once per process (`yaml`, `open`)
  and its rule expressions compiled once (`eval`, `exec`). It re-reads and re-compiles them for every file
  and line: about 3/4 of its time.
- rcp_reading: rcp_checker's reader reads the text we give it (`open`: the lines check_run has already
  parsed, or a file read in place from a tar); its prefix-stripping regular expression, quadratic in the
  line's length, is replaced by a linear equivalent (`re`: a 300 KB line took half a minute); its JSON is
  decoded by msgspec (`json`).

The swaps are kept because issue 27's validation target is missed without them: the v5.1 round validated
end to end on two worker processes at 8x or more the speed of mlperf-logging's checker alone
(bench/validate.py), with identical verdicts. Measured 2026-11-28 on the shared 2-core machine, each
against its own baseline in the same run: 7.95x with the swaps (15.3 s against 121.6 s), 2.11x without the
yaml/open/eval/exec and re/json swaps (52.5 s against 111.1 s); 9.37x with them on the quiet machine. The
re/json swaps alone: read_run over 150 v5.1 logs took 0.07 s of CPU with them and 0.17 s without (2.18 s
without when the file is read whole, 0.14 s with).
"""

from __future__ import annotations

import builtins
import contextlib
import copy
import dataclasses
import functools
import importlib
import io
import json
import logging
import os
import re
from collections.abc import Callable
from pathlib import Path

from ...budget import is_stop
from ...logs.formats import mllog

try:
    import mlperf_logging
    from mlperf_logging.compliance_checker import mlp_compliance
except ImportError:  # reported as a finding by the callers, never a crash
    mlperf_logging = mlp_compliance = None

USAGE = "training"


def available() -> bool:
    return mlp_compliance is not None


@functools.lru_cache(maxsize=1)
def version() -> str:
    try:
        from importlib.metadata import version as dist_version

        return dist_version("mlperf-logging")
    except Exception:  # not installed as a distribution (e.g. a source checkout)
        return "?"


@functools.lru_cache(maxsize=1)
def compliance_dir() -> Path:
    return Path(mlp_compliance.__file__).resolve().parent


def ruleset_tuple(ruleset: str) -> tuple[int, ...]:
    """'5.1.0' -> (5, 1, 0); anything odd -> () (sorts before every real ruleset)."""
    try:
        return tuple(int(part) for part in ruleset.split("."))
    except ValueError:
        return ()


_ABSENT = object()


@contextlib.contextmanager
def _patched(target, name: str, value):
    """Set target.name = value for the duration of the block (module attributes of the library).
    A name the module does not have (e.g. `eval`, which shadows the builtin) is removed again."""
    old = getattr(target, name, _ABSENT) if name in vars(target) else _ABSENT
    setattr(target, name, value)
    try:
        yield value
    finally:
        if old is _ABSENT:
            delattr(target, name)
        else:
            setattr(target, name, old)


@contextlib.contextmanager
def compliance_run(enqueue, cache: bool = True):
    """Run mlp_compliance's checks with `enqueue` as its config queue and, with `cache`, its YAML parsed and
    its rules compiled once per process. A time limit the library's bare `except:` swallowed is raised
    again on the way out."""
    with contextlib.ExitStack() as stack:
        stack.enter_context(_patched(mlp_compliance, "enqueue_config", enqueue))
        if cache:
            stack.enter_context(_patched(mlp_compliance, "yaml", _cached_yaml()))
            stack.enter_context(_patched(mlp_compliance, "open", _ConfigFile))
            stack.enter_context(_patched(mlp_compliance, "eval", _cached_eval))
            stack.enter_context(_patched(mlp_compliance, "exec", _cached_exec))
        _pending_stop.clear()
        yield
    if _pending_stop:
        raise _pending_stop.pop()


@contextlib.contextmanager
def rcp_reading(rcp_checker, open_text):
    """Run rcp_checker's reader on the text `open_text()` gives (a text stream), with the linear stand-in for
    its prefix-stripping regular expression and msgspec for its JSON."""
    with contextlib.ExitStack() as stack:
        stack.enter_context(_patched(rcp_checker, "re", LinearRe(rcp_checker.TOKEN)))
        stack.enter_context(_patched(rcp_checker, "json", _Json()))
        stack.enter_context(_patched(rcp_checker, "open", lambda *_, **__: open_text()))
        yield


class _Json:
    """Stands in for the json module inside rcp_checker while it reads a run: it decodes each eval line two or
    three times, which msgspec does about four times faster (mllog.loads: json's loads where they differ)."""

    loads = staticmethod(mllog.loads)

    def __getattr__(self, name):
        return getattr(json, name)


class _YamlCache:
    """Stands in for the yaml module inside mlp_compliance: each config file is parsed once per process.
    The checker only reads the parsed rules (it never changes them), so one copy is shared. Config
    files are mlperf-logging's own (config_path, below), named by their resolved path."""

    def __init__(self, yaml_module):
        self._yaml = yaml_module
        self._parsed: dict = {}

    def load(self, stream, Loader):
        key = (stream.name, Loader)
        if key not in self._parsed:
            with open(stream.name) as f:  # as mlp_compliance opens it
                self._parsed[key] = self._yaml.load(f, Loader=Loader)
        return self._parsed[key]

    def __getattr__(self, name):
        return getattr(self._yaml, name)


class _ConfigFile:
    """Stands in for `open` inside mlp_compliance, whose only use is `with open(config_file) as f:
    yaml.load(f, ...)`: _YamlCache reads the file by name the first time, so it is not opened for every log
    (a text file's opening cost a tenth of the checker's time)."""

    def __init__(self, name, *args, **kwargs):
        self.name = name

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


_yaml_cache = None


def _cached_yaml():
    global _yaml_cache
    if _yaml_cache is None:
        _yaml_cache = _YamlCache(mlp_compliance.yaml)
    return _yaml_cache


@functools.lru_cache(maxsize=4096)
def _compiled(source: str, mode: str):
    return compile(source, "<mlperf-logging rule>", mode, dont_inherit=True)


# The library wraps every rule in a bare `except:`, which would also swallow a task's time limit
# (Celery raises SoftTimeLimitExceeded inside whatever runs) or an interrupt. The wrappers below
# note such an exception on its way out; compliance_run raises it again once the library returns.
_pending_stop: list[BaseException] = []


def _cached(mode: str):
    """eval()/exec() for mlp_compliance: its rules are a few hundred strings run on every log line,
    so each is compiled once; a time limit raised inside is noted for compliance_run to raise again."""

    def run(source, globals=None, locals=None):
        if isinstance(source, str):
            source = _compiled(source, mode)
        try:
            return getattr(builtins, mode)(
                source, globals, locals
            )  # looked up late: tests replace it
        except BaseException as exc:
            if is_stop(exc):
                _pending_stop.append(exc)
            raise

    return run


_cached_eval = _cached("eval")
_cached_exec = _cached("exec")


class LinearRe:
    """Stands in for the `re` module inside mlperf-logging readers that strip a line's prefix with
    re.sub(".*" + TOKEN, TOKEN, line): that search restarts at every position after the match and
    is quadratic in the line length (a 300 KB line takes half a minute). The same result in
    linear time: keep the text from the last TOKEN on. Any other call goes to the real module."""

    def __init__(self, token: str):
        self.token = token
        self.pattern = ".*" + token

    def sub(self, pattern, repl, string, *args, **kwargs):
        if (
            pattern == self.pattern
            and repl == self.token
            and not args
            and not kwargs
            and "\n" not in string[:-1]
        ):
            i = string.rfind(self.token)
            return string if i < 0 else string[i:]
        return re.sub(pattern, repl, string, *args, **kwargs)  # noqa: B034 - re.sub's own signature, passed on

    def __getattr__(self, name):
        return getattr(re, name)


class Capture(logging.Handler):
    """Takes what the library logs (through the root logger, WARNING and up) and prints while it runs,
    so that none of it reaches the worker's own log; records of other code pass through unchanged."""

    def __init__(self):
        super().__init__(logging.NOTSET)
        self.records: list[logging.LogRecord] = []
        self.stdout = io.StringIO()
        self._stack = contextlib.ExitStack()
        self._saved: list[logging.Handler] = []

    def emit(self, record: logging.LogRecord) -> None:
        if _LIBRARY_PATH in (record.pathname or ""):
            if record.levelno >= logging.WARNING:
                self.records.append(record)
            return
        for handler in self._saved:
            if record.levelno >= handler.level:
                handler.handle(record)

    def messages(self) -> list[str]:
        out = []
        for record in self.records:
            try:
                out.append(record.getMessage())
            except Exception:  # a bad format string in the library's call
                out.append(str(record.msg))
        return out

    def printed(self) -> list[str]:
        return [line for line in self.stdout.getvalue().splitlines() if line.strip()]

    def __enter__(self):
        root = logging.getLogger()
        self._saved = root.handlers[:]
        root.handlers[:] = [self]
        self._stack.callback(root.handlers.__setitem__, slice(None), self._saved)
        self._stack.enter_context(contextlib.redirect_stdout(self.stdout))
        return self

    def __exit__(self, *exc):
        self._stack.close()
        return False


_LIBRARY_PATH = f"{os.sep}mlperf_logging{os.sep}"


# --- the log parser -----------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class LogParser:
    """One ruleset's mlp_parser: `token` marks a record on a line; read_line(lineno, text) makes the
    LogLine of a record's text from the token on (string_to_logline: it raises on a line it cannot read);
    logline(full_string, timestamp, key, value, lineno) makes one from its fields (LogLine)."""

    token: str
    read_line: Callable
    logline: Callable


@functools.lru_cache(maxsize=64)
def log_parser(ruleset: str) -> LogParser | None:
    """The ruleset's parser, or None when this version of the library has none for it."""
    try:
        module = importlib.import_module(
            f"mlperf_logging.compliance_checker.mlp_parser.ruleset_{ruleset.replace('.', '')}"
        )
        return LogParser(module.TOKEN, module.string_to_logline, module.LogLine)
    except (ImportError, AttributeError):
        return None


# --- the compliance checker ---------------------------------------------------------------------------------

_CONFIG_NAME = re.compile(r"^[a-z]+_\d+\.\d+\.\d+/[A-Za-z0-9_]+\.yaml$")


@functools.lru_cache(maxsize=512)
def config_path(name: str) -> Path | None:
    """The file for a config name the rules ask for, if it is one of mlperf-logging's own."""
    if not isinstance(name, str) or not _CONFIG_NAME.match(name):
        return None
    base = compliance_dir()
    path = (base / name).resolve()
    if path.parent.parent != base or not path.is_file():
        return None
    return path


def compliance_checker(ruleset: str):
    """A new ComplianceChecker of the ruleset, as ComplianceChecker below describes it."""
    return _compliance_checker_class(ruleset)()


@functools.lru_cache(maxsize=64)
def _compliance_checker_class(ruleset: str):
    class ComplianceChecker(mlp_compliance.ComplianceChecker):
        """The library's checker with a private, guarded config queue. check_loglines runs the rules of
        `config` and of every config they queue (enqueue, standing in for the library's enqueue_config
        within compliance_run); afterwards `refused` lists the config names that are not mlperf-logging's
        files, `crash` holds (config, exception) when a config's rules raised, `config_of` maps a message
        to the config that produced it, and warning_messages/error_messages give the messages."""

        def __init__(self):
            super().__init__(USAGE, ruleset, quiet=False, werror=False)
            self.queue: list[str] = []
            self.refused: list[str] = []
            self.config_of: dict[str, str] = {}
            self.crash: tuple[str, BaseException] | None = None

        def enqueue(self, config) -> None:
            if not isinstance(config, str) or config_path(config) is None:
                self.refused.append(str(config)[:200])
            else:
                self.queue.append(config)

        def check_loglines(self, loglines, config, unruled: int = 0):
            """unruled: how many lines of the log were left out of loglines (no rule names their key)."""
            if not loglines and not unruled:
                self.put_message("No log lines detected")
            self.enqueue(config)
            while self.queue:
                current = self.queue.pop(0)
                try:
                    self.configured_checks(loglines, str(config_path(current)))
                except Exception as exc:  # e.g. an ATLEAST_ONE_CHECK on a value of the wrong type
                    if is_stop(exc):
                        raise
                    self.crash = (current, exc)
                    break
                finally:
                    for msg in self.all_messages():
                        self.config_of.setdefault(msg, current)

        def warning_messages(self) -> list[str]:
            return list(self.warnings.values())

        def error_messages(self) -> list[str]:
            return [*self.overwritable.values(), *self.not_overwritable]

        def all_messages(self) -> list[str]:
            return self.warning_messages() + self.error_messages()

    return ComplianceChecker


# --- the RCP checker ----------------------------------------------------------------------------------------


def rcp_module():
    """mlperf_logging.rcp_checker.rcp_checker; ImportError when it or numpy/scipy, which it brings, is missing
    (a second to import: callers import it early, see rcp.preload)."""
    from mlperf_logging.rcp_checker import rcp_checker

    return rcp_checker


def rcp_folder(ruleset: str) -> Path:
    """The folder of the ruleset's RCP files (rcps_<benchmark>.json)."""
    return Path(rcp_module().__file__).resolve().parent / f"{USAGE}_{ruleset}"


def read_submission_file(name: str, ruleset: str, open_text) -> tuple:
    """rcp_checker's reader on the text stream `open_text()` gives, under rcp_reading: (not_converged,
    epochs to converge, global_batch_size, the rest it returns)."""
    rcp_checker = rcp_module()
    with rcp_reading(rcp_checker, open_text):
        return rcp_checker.read_submission_file(name, ruleset, False)


@functools.lru_cache(maxsize=64)
def rcp_table(ruleset: str, benchmark: str) -> RcpTable:
    """The benchmark's RCPs, read once per process. Raises what the library raises on a table it cannot load."""
    rcp_checker = rcp_module()

    class Checker(rcp_checker.RCP_Checker):
        """The library's RCP checker, without its writes to the file system."""

        def _set_results_scaling(self, scale_factor, results_dir):
            pass

        def _reset_results_scaling(self, results_dir):
            pass

    with Capture():
        return RcpTable(Checker(USAGE, ruleset, benchmark, verbose=False))


class RcpTable:
    """The RCP records of one benchmark (the library's pruned set), asked for by what they are. A record is
    the library's dict ("BS", "RCP Mean", ...)."""

    PRUNED = "pruned_rcps"

    def __init__(self, checker):
        self.checker = checker

    def at(self, batch_size):
        """The record for exactly this global batch size, or None."""
        return self.checker._find_rcp(batch_size, self.PRUNED)

    def below(self, batch_size):
        """The record of the largest batch size below this one, or None."""
        return self.checker._find_top_min_rcp(batch_size, self.PRUNED)

    def above(self, batch_size):
        """The record of the smallest batch size above this one, or None."""
        return self.checker._find_bottom_max_rcp(batch_size, self.PRUNED)

    def smallest(self):
        """The record of the smallest batch size."""
        return self.checker._find_min_rcp(self.PRUNED)

    def interpolated(self, batch_size, below, above):
        """A record for this batch size interpolated between two records."""
        return self.checker._create_interp_rcp(batch_size, below, above)[1]

    def judge(self, record, epochs: list) -> tuple[bool, float]:
        """(the runs' epochs to converge pass the record's statistics, the normalisation factor)."""
        ok, factor = self.checker._eval_submission_record(copy.deepcopy(record), list(epochs), "")
        return bool(ok), float(factor)


# --- the system description checker -------------------------------------------------------------------------


def check_system_desc(path: str, ruleset: str) -> bool:
    """system_desc_checker's verdict on the system.json at `path`; it logs its reasons (see Capture)."""
    from mlperf_logging.system_desc_checker import system_desc_checker

    valid, *_ = system_desc_checker.check_system_desc(path, USAGE, ruleset)
    return bool(valid)
