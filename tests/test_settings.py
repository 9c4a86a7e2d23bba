"""The settings module, read as a deployment reads it: from the environment."""

import os
import subprocess
import sys
from pathlib import Path


def _import_settings(**env) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if k not in ("DEBUG", "SECRET_KEY")}
    return subprocess.run([sys.executable, "-c", "import portal.settings as s; print(s.DEBUG)"],
                          cwd=Path(__file__).parents[1], env={**base, **env}, capture_output=True, text=True)


def test_debug_off_refuses_the_development_secret_key():
    refused = _import_settings(DEBUG="0")
    assert refused.returncode == 1
    assert "ImproperlyConfigured: DEBUG is off but SECRET_KEY is not set" in refused.stderr
    assert _import_settings(DEBUG="0", SECRET_KEY="x" * 50).stdout.strip() == "False"
    assert _import_settings().stdout.strip() == "True"  # the embedded default, as `make run` uses it
