"""Planted bottleneck: low occupancy, limited by registers (a tile loaded long before its use).

Each program walks 32 independent chains through a random permutation of 16M int32 (64 MB, in
DRAM) for 128 steps, then weights a 256-wide feature row per chain by the chain's result. The
feature tile (32 x 256 fp32) is loaded *before* the walk, so its 128 values per thread stay live
in registers through the whole loop: ~150 registers per thread, six two-warp programs per SM,
12 of 64 warps. The walk is a chain of dependent DRAM round trips, whose only cure is more chains
in flight, i.e. more resident warps, and the registers forbid them. Loading the tile after the
loop (chase_feat_late_triton.py) frees the registers and lets 32 programs share an SM.
"""
import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
NODES = 2**24
R, W = 32, 256            # chains per program, feature width
PROGRAMS = 132 * 6 * 4    # 4 waves at 6 programs per SM
STEPS = 128


@triton.jit
def chase_feat_early_kernel(next_ptr, feat_ptr, out_ptr, STEPS: tl.constexpr, R: tl.constexpr, W: tl.constexpr):
    rows = tl.program_id(0) * R + tl.arange(0, R)
    cols = tl.arange(0, W)
    feat = tl.load(feat_ptr + rows[:, None].to(tl.int64) * W + cols[None, :])  # live through the whole loop
    node = rows
    total = tl.zeros([R], dtype=tl.int32)
    for _ in range(STEPS):
        node = tl.load(next_ptr + node)  # dependent DRAM loads
        total += node & 1023
    tl.store(out_ptr + rows, tl.sum(feat * total.to(tl.float32)[:, None], axis=1))


def make_inputs():
    torch.manual_seed(0)
    nxt = torch.randperm(NODES, device=DEVICE, dtype=torch.int32)
    feat = torch.randn(PROGRAMS * R, W, device=DEVICE)
    return nxt, feat


def run(nxt, feat):
    out = torch.empty(PROGRAMS * R, device=feat.device, dtype=torch.float32)
    chase_feat_early_kernel[(PROGRAMS,)](nxt, feat, out, STEPS=STEPS, R=R, W=W, num_warps=2)
    return out


def reference(nxt, feat):
    n = nxt.long()
    node = torch.arange(PROGRAMS * R, device=nxt.device)
    total = torch.zeros(PROGRAMS * R, dtype=torch.long, device=nxt.device)
    for _ in range(STEPS):
        node = n[node]
        total += node & 1023
    return (feat.double() * total.double()[:, None]).sum(1).float()
