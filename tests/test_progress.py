"""The %%optimize progress a person reads: versions and their state, updated as events come, the best so far."""

from __future__ import annotations

from kernel_lab.display.progress import Progress
from kernel_lab.loop import Event


def test_progress_follows_each_candidate_and_the_best_so_far():
    p = Progress()
    for event in (
        Event("Replay mode: ...", state="note"),
        Event("round 1: profiling v000", 1, "v000", "profiling"),
        Event("round 1: v001 proposed: add_kernel: BLOCK 64 → 512", 1, "v001", "proposed"),
        Event("round 1: v002 proposed: add_kernel: num_warps 4 → 8", 1, "v002", "proposed"),
        Event("round 1: v001 checking", 1, "v001", "checking"),
    ):
        p.add(event)
    assert "v001 checking…" in p.line() and "v002 waiting" in p.line() and "best: the original" in p.line()
    p.add(
        Event(
            "round 1: v001 correct, 2.34x vs the original", 1, "v001", "verified", "correct, 2.34x vs the original", "v001, 2.34x"
        )
    )
    html = p.html()
    assert "correct, 2.34x vs the original" in html and "Best so far: <b>v001, 2.34x</b>" in html and "Replay mode" in html
    assert "BLOCK 64 → 512" in html and "waiting" in html
    assert "1 candidate(s) judged; best: v001, 2.34x" in p.finished()  # v002 still waiting: not counted
