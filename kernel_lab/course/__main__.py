"""``python3 -m kernel_lab.course [FOLDER]``: copy the lessons into FOLDER (default ~/kernel-lab-course) and
say where (see :func:`kernel_lab.course.start`)."""

from __future__ import annotations

import argparse
import sys

from kernel_lab.course.workspace import DEFAULT, start
from kernel_lab.errors import KernelLabError


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m kernel_lab.course", description="Copy the course's lessons to work on.")
    parser.add_argument("folder", nargs="?", default=str(DEFAULT), help=f"where to copy them (default {DEFAULT})")
    try:
        print(start(parser.parse_args(argv).folder))
    except KernelLabError as exc:
        print(f"kernel_lab.course: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
