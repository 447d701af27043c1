"""Judge rounds on rowsum_tiny (a fast launch variant against the original): the per-call times the judge reads,
with the next round's processes started ahead ("spares") or not ("none"). (GPU)

    python probe_judge.py benchmarks/race/rowsum_tiny.py spares|none      (calls 4, 6, 7)

Call 7 ran it with ``KL_COVER_US`` at 0 and 300: a switch the sandbox had for that call only (a spin of that many
microseconds after each timed call's cache flush), since made a constant (``sandbox.COVER_CYCLES``).
"""

import os
import subprocess
import sys
import time
from pathlib import Path

from kernel_lab.verify import judge as J
from kernel_lab.verify.verdict import quartiles

source = Path(sys.argv[1]).read_text()
fast = source.replace("BLOCK=64, num_warps=1", "BLOCK=2048, num_warps=8")
assert fast != source
spares = sys.argv[2] == "spares"
seen = []


def hidden(events, walls, *reference):
    """In place of the judge's check of hidden work: keep each candidate's quartiles."""
    seen.append((quartiles(events), quartiles(walls)))


J._hidden_work = hidden
if not spares:  # no processes started ahead: each candidate's process starts when the round needs it
    spawn = J.Judge._spawn

    def started(self):
        self._spare = [w for w in self._spare if w is not None]
        return self._spare.pop(0) if self._spare else spawn(self)

    J.Judge._started = started
    J.Judge._spawn = lambda self: None
print("spares:", spares, "cover", os.environ.get("KL_COVER_US"))
with J.Judge(source, device="cuda") as judge:
    judge.start()
    for n in (4, 4):
        seen.clear()
        t0 = time.monotonic()
        ps = subprocess.Popen(
            "sleep 1.5; ps -eo pcpu,etimes,args --sort=-pcpu | head -12", shell=True, stdout=subprocess.PIPE, text=True
        )
        verdicts = judge.check_many([fast] * n)
        print(f"round of {n} in {time.monotonic() - t0:.1f} s")
        for v in verdicts:
            t = v.timing
            assert t is not None
            print(
                f"  ref {t.reference_ms:.4f} (iqr {t.reference_spread:.4f}) cand {t.candidate_ms:.4f} "
                f"(iqr {t.candidate_spread:.4f}) {t.speedup:.3f}x sig={t.significant} warn={len(v.warnings)}"
            )
        for e, w in seen:
            print("  events q", " ".join(f"{x:.4f}" for x in e), "walls q", " ".join(f"{x:.4f}" for x in w))
        print(ps.communicate()[0])
        judge._spare = [w for w in judge._spare if w is not None]
