#!/usr/bin/env python
"""Build the C scanner of the log parser (submissions/checking/logs/_scan.c) in place.

The parser works without it (the same judging in Python, about a third slower on a v5.1 round), so a
machine without a C compiler is told so and set up all the same."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    from setuptools import Extension, setup

    try:
        setup(
            name="portal-scan",
            script_args=["-q", "build_ext", "--inplace"],
            ext_modules=[
                Extension(
                    "submissions.checking.logs._scan",
                    ["submissions/checking/logs/_scan.c"],
                    extra_compile_args=["-O2", "-Wall", "-Werror"],
                )
            ],
        )
    except (SystemExit, Exception) as error:  # setuptools exits on a compiler error
        print(
            f"note: the C scanner was not built ({error}); the log parser uses its Python code.",
            file=sys.stderr,
        )
    return 0


if __name__ == "__main__":
    import os

    os.chdir(ROOT)
    sys.exit(main())
