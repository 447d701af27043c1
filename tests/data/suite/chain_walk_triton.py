"""Planted bottleneck: latency bound, one dependent chain of DRAM loads per program (Triton).

Each program follows a random permutation of 16M int32 (64 MB, more than the L2) for 256 steps:
the index of the next load is the value of the current one, so a program has exactly one load in
flight and waits a full DRAM round trip at every step. The grid fills the GPU (16 four-warp
programs per SM, two waves), yet each warp moves one 32-byte sector per round trip: both the
SMs and the memory system are mostly idle and warps sit in long-scoreboard stalls. More
independent chains per program (more loads in flight) is the fix.
"""
import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
NODES = 2**24
PROGRAMS = 132 * 16 * 2
STEPS = 256


@triton.jit
def chain_walk_kernel(next_ptr, out_ptr, STEPS: tl.constexpr):
    pid = tl.program_id(0)
    node = pid  # one chain per program, a scalar
    total = 0
    for _ in range(STEPS):
        node = tl.load(next_ptr + node)  # the next address depends on this load
        total += node & 1023
    tl.store(out_ptr + pid, total)


def make_inputs():
    torch.manual_seed(0)
    return (torch.randperm(NODES, device=DEVICE, dtype=torch.int32),)


def run(nxt):
    out = torch.empty(PROGRAMS, device=nxt.device, dtype=torch.int32)
    chain_walk_kernel[(PROGRAMS,)](nxt, out, STEPS=STEPS, num_warps=4)
    return out


def reference(nxt):
    n = nxt.long()
    node = torch.arange(PROGRAMS, device=nxt.device)
    total = torch.zeros(PROGRAMS, dtype=torch.long, device=nxt.device)
    for _ in range(STEPS):
        node = n[node]
        total += node & 1023
    return total.int()
