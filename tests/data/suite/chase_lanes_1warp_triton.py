"""Planted bottleneck: low occupancy, limited by the block count (one-warp Triton programs).

Each program is a single warp (num_warps=1) that walks one linked list of 32-byte nodes held in
L2 (16 MB table): lane i reads word i % 8 of the node, and the next node's index is in word 0,
so every step waits an L2 round trip. Latency like this is hidden only by having many warps
waiting at once, but an SM runs at most 32 blocks, so with one-warp blocks it holds 32 warps, half
of the 64 it could (no registers or shared memory limit it: the kernel uses no shared memory).
The fix is more warps per program: chase_lanes_4warp_triton.py walks four lists per program
with num_warps=4 (same lists, same total work) and fills the SM.
maxnreg=32 in the launch: left alone, ptxas gives the one-warp kernel 64 registers (checked with
triton 3.6.0 on the CPU), which would cap the SM at 32 warps too and make registers a second,
equal limiter; at 32 registers (no spills) the block count is the only limiter.
"""
import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
NODES = 2**19              # 512K nodes x 32 B = 16 MB: L2-resident
CHAINS = 132 * 64 * 2      # as many lists as two full waves of warps
STEPS = 256
GROUPS = 1                 # lists (warps) per program


@triton.jit
def chase_groups_kernel(nodes_ptr, out_ptr, STEPS: tl.constexpr, GROUPS: tl.constexpr):
    lanes = tl.arange(0, 32 * GROUPS)
    node = tl.program_id(0) * GROUPS + lanes // 32  # 32 lanes share a list
    total = tl.zeros([32 * GROUPS], dtype=tl.int32)
    for _ in range(STEPS):
        v = tl.load(nodes_ptr + node * 8 + lanes % 8)  # one 32-byte node per list
        total += v & 0xFFFF
        node = tl.load(nodes_ptr + node * 8)            # the link: the next step depends on it
    tl.store(out_ptr + tl.program_id(0) * 32 * GROUPS + lanes, total)


def make_inputs():
    torch.manual_seed(0)
    nodes = torch.randint(0, 2**16, (NODES, 8), device=DEVICE, dtype=torch.int32)
    nodes[:, 0] = torch.randperm(NODES, device=DEVICE, dtype=torch.int32)
    return (nodes,)


def run(nodes):
    out = torch.empty(CHAINS * 32, device=nodes.device, dtype=torch.int32)
    chase_groups_kernel[(CHAINS // GROUPS,)](nodes, out, STEPS=STEPS, GROUPS=GROUPS, num_warps=GROUPS,
                                             maxnreg=32)  # see the docstring
    return out


def reference(nodes):
    node = torch.arange(CHAINS, device=nodes.device)
    slot = torch.arange(32, device=nodes.device) % 8
    total = torch.zeros(CHAINS, 32, dtype=torch.long, device=nodes.device)
    for _ in range(STEPS):
        v = nodes[node].long()
        total += v[:, slot] & 0xFFFF
        node = v[:, 0]
    return total.reshape(-1).int()
