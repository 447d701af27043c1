"""The LLM agent's own overhead per turn (issue #39): what the loop spends between the model's answer and its next
request (the judge, and for a correct candidate its profile), with the model's time taken out: a stand-in server on
127.0.0.1 plays a recorded conversation back at once.

    python benchmarks/llm_turn_overhead.py [--cpu] [--transcript vNNN/transcript.json] [LESSON ...]

For each of three naive Triton cells of the course (01_roofline, 06_fusion, 09_optimize by default), one worker,
three turns: the lesson's reference cell (correct, faster), the naive cell again (correct, not faster), the reference
again; with ``--transcript``, the model's answers of a transcript a real run kept (``answers`` of
:mod:`kernel_lab.rewrite.conversation`), for every cell named. A turn's overhead is the time from the server's answer
to the worker's next request: the answer parsed, the user's harness put back, the candidate judged (and profiled
with Nsight Compute when correct, on a GPU), the feedback written.

``--cpu``: here, without a GPU: Triton's CPU interpreter and each cell's recorded report replayed (no ncu), which the
output says; its seconds are not a GPU's. The goal on the GPU: at most 5 s a turn for Triton, so that the model's
time dominates.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))  # the stand-in server

from openai_server import OpenAIServer  # noqa: E402

import kernel_lab  # noqa: E402
from kernel_lab.course.catalog import LESSONS_DIR  # noqa: E402
from kernel_lab.rewrite.conversation import answers  # noqa: E402

CELLS = ("01_roofline", "06_fusion", "09_optimize")


def fenced(path: Path) -> str:
    return f"Here is the faster cell.\n\n```python\n{path.read_text()}```\n\nIt addresses memory_bound.\n"


def recorded(lesson: str, transcript: Path | None) -> list[str]:
    """The model's answers to play, in order."""
    if transcript is not None:
        return answers(json.loads(transcript.read_text()))
    folder = LESSONS_DIR / lesson
    return [fenced(folder / "reference.py"), fenced(folder / "naive.py"), fenced(folder / "reference.py")]


def overheads(lesson: str, played: list[str], cpu: bool, root: Path) -> list[float]:
    """Seconds from each answer sent to the worker's next request (the last answer has none: not counted)."""
    cell = LESSONS_DIR / lesson / "naive.py"
    with OpenAIServer() as server:
        server.script(*played)
        kernel_lab.optimize(
            cell,
            rounds=1,
            rewriter="llm",
            model="test-model",
            base_url=server.base_url,
            llm_workers=1,
            llm_turns=len(played),
            screen=0,
            root=root,
            replay=cell.with_suffix(".ncu-rep") if cpu else None,
        )
    sent = [at for at, status in server.sent if status == 200]
    asked = [r.at for r in server.requests if r.path.endswith("/chat/completions")]
    return [asked[i + 1] - sent[i] for i in range(min(len(sent), len(asked) - 1))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("lessons", nargs="*", default=list(CELLS))
    parser.add_argument("--cpu", action="store_true", help="no GPU: Triton interpreted, recorded reports replayed")
    parser.add_argument("--transcript", type=Path, help="play the model's answers of this transcript.json")
    args = parser.parse_args()
    where = "CPU (Triton's CPU interpreter, replayed reports: not a GPU's seconds)" if args.cpu else "GPU (ncu profiles)"
    print(f"LLM agent overhead per turn, on the {where}")
    print("the model's time excluded: a stand-in server plays the recorded answers back at once")
    print(f"{'cell':<16} {'turns':>5} {'s per turn':>32} {'median':>8}")
    every: list[float] = []
    with tempfile.TemporaryDirectory() as root:
        for lesson in args.lessons:
            seconds = overheads(lesson, recorded(lesson, args.transcript), args.cpu, Path(root))
            every += seconds
            listed = ", ".join(f"{s:.2f}" for s in seconds) or "–"
            median = f"{statistics.median(seconds):.2f}" if seconds else "–"
            print(f"{lesson:<16} {len(seconds):>5} {listed:>32} {median:>8}")
    if every:
        print(f"all: median {statistics.median(every):.2f} s per turn, most {max(every):.2f} s ({len(every)} turns)")


if __name__ == "__main__":
    main()
