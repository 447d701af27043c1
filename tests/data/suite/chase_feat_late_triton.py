"""Fix of chase_feat_early_triton.py: the same kernel, the feature tile read after the walk, in slices.

Identical chains, steps and result. The 32 x 256 feature tile is no longer loaded before the loop
(where its 128 values per thread stayed live through the whole walk): after the walk it is read
32 columns at a time and reduced slice by slice, so no more than 16 feature values per thread are
live at any point. (Loading the whole tile after the loop is not enough: the compiler sizes the
register file for the kernel's peak, and a whole tile in flight at the end is the same peak as
before; checked with triton 3.6.0's compiler on the CPU: 142 registers either way.) With few
registers per thread, 32 two-warp programs share an SM and all 3,168 programs run at once.
"""
import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
NODES = 2**24
R, W = 32, 256            # chains per program, feature width
PROGRAMS = 132 * 6 * 4    # the same 3,168 programs as the early-load version
STEPS = 128


@triton.jit
def chase_feat_late_kernel(next_ptr, feat_ptr, out_ptr, STEPS: tl.constexpr, R: tl.constexpr, W: tl.constexpr):
    rows = tl.program_id(0) * R + tl.arange(0, R)
    node = rows
    total = tl.zeros([R], dtype=tl.int32)
    for _ in range(STEPS):
        node = tl.load(next_ptr + node)  # dependent DRAM loads
        total += node & 1023
    weight = total.to(tl.float32)[:, None]
    acc = tl.zeros([R], dtype=tl.float32)
    for w0 in tl.static_range(0, W, 32):  # the tile in 32-column slices, after the walk
        cols = w0 + tl.arange(0, 32)
        feat = tl.load(feat_ptr + rows[:, None].to(tl.int64) * W + cols[None, :])
        acc += tl.sum(feat * weight, axis=1)
    tl.store(out_ptr + rows, acc)


def make_inputs():
    torch.manual_seed(0)
    nxt = torch.randperm(NODES, device=DEVICE, dtype=torch.int32)
    feat = torch.randn(PROGRAMS * R, W, device=DEVICE)
    return nxt, feat


def run(nxt, feat):
    out = torch.empty(PROGRAMS * R, device=feat.device, dtype=torch.float32)
    chase_feat_late_kernel[(PROGRAMS,)](nxt, feat, out, STEPS=STEPS, R=R, W=W, num_warps=2)
    return out


def reference(nxt, feat):
    n = nxt.long()
    node = torch.arange(PROGRAMS * R, device=nxt.device)
    total = torch.zeros(PROGRAMS * R, dtype=torch.long, device=nxt.device)
    for _ in range(STEPS):
        node = n[node]
        total += node & 1023
    return (feat.double() * total.double()[:, None]).sum(1).float()
