"""Planted bottleneck: uncoalesced global access (a batched tridiagonal solver with one system per thread, systems stored row by row).

131,072 independent tridiagonal systems of 128 unknowns (fp32 a, b, c, d, one system per row,
64 MiB each), as the line sweeps of an ADI diffusion step produce them, solved with the Thomas
algorithm: forward elimination (c' and d' stored), then back substitution. Each program owns 128
systems, one per thread, and walks the unknowns k = 0..127, loading a[s, k], b[s, k], c[s, k],
d[s, k] for its 128 systems: the 32 lanes of a warp read 32 addresses 512 bytes apart, 32 sectors
per request for 128 useful bytes (4 of every 32 bytes), and the stores of c' and d' and the back
substitution's loads and stores do the same. A sector could serve the next 7 unknowns from L1, but
~992 systems per SM x 6 arrays are more 128-byte lines than L1 holds, so L1 and L2 carry ~9
requests x 32 sectors per unknown per warp (~151M sector requests, ~4.8 GB; 32 registers, 1,024
programs of 4 warps): ~0.5-1 ms, where the 335 MB the solve needs (a, b, c, d read, x written) take
~110 us at 3.05 TB/s. Expected: UncoalescedGlobalAccess with ~4 bytes used per sector, L1/L2 busy,
DRAM well below its peak. The fix is the interleaved layout ([unknown, system], lanes on
consecutive systems) or loading a tile of rows coalesced and transposing it through shared memory.
"""

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
SYSTEMS, NEQ = 131072, 128
BLOCK = 128  # systems per program, one per thread


@triton.jit
def thomas_rows_kernel(a_ptr, b_ptr, c_ptr, d_ptr, cp_ptr, x_ptr, systems, NEQ: tl.constexpr, BLOCK: tl.constexpr):
    s = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = s < systems
    row = s.to(tl.int64) * NEQ
    cp = tl.zeros([BLOCK], dtype=tl.float32)
    dp = tl.zeros([BLOCK], dtype=tl.float32)
    for k in range(0, NEQ):  # forward elimination
        a = tl.load(a_ptr + row + k, mask=mask, other=0.0)
        b = tl.load(b_ptr + row + k, mask=mask, other=1.0)
        c = tl.load(c_ptr + row + k, mask=mask, other=0.0)
        d = tl.load(d_ptr + row + k, mask=mask, other=0.0)
        inv = 1.0 / (b - a * cp)
        cp = c * inv
        dp = (d - a * dp) * inv
        tl.store(cp_ptr + row + k, cp, mask=mask)
        tl.store(x_ptr + row + k, dp, mask=mask)
    x = tl.zeros([BLOCK], dtype=tl.float32)
    for kk in range(0, NEQ):  # back substitution, k = NEQ-1 .. 0
        k = NEQ - 1 - kk
        cpk = tl.load(cp_ptr + row + k, mask=mask, other=0.0)
        dpk = tl.load(x_ptr + row + k, mask=mask, other=0.0)
        x = dpk - cpk * x
        tl.store(x_ptr + row + k, x, mask=mask)


def make_inputs():
    g = torch.Generator(device=DEVICE)
    g.manual_seed(0)
    a = torch.rand(SYSTEMS, NEQ, device=DEVICE, generator=g) * 2.0 - 1.0  # sub-diagonal
    c = torch.rand(SYSTEMS, NEQ, device=DEVICE, generator=g) * 2.0 - 1.0  # super-diagonal
    b = torch.rand(SYSTEMS, NEQ, device=DEVICE, generator=g) + 4.0  # diagonally dominant
    d = torch.randn(SYSTEMS, NEQ, device=DEVICE, generator=g)
    a[:, 0] = 0.0
    c[:, -1] = 0.0
    return a, b, c, d


def run(a, b, c, d):
    systems, neq = a.shape
    cp = torch.empty_like(a)  # scratch: c'
    x = torch.empty_like(a)
    thomas_rows_kernel[(triton.cdiv(systems, BLOCK),)](a, b, c, d, cp, x, systems, NEQ=neq, BLOCK=BLOCK, num_warps=4)
    return x


def reference(a, b, c, d):
    a, b, c, d = (t.double() for t in (a, b, c, d))
    neq = a.shape[1]
    cp = torch.zeros_like(a)
    dp = torch.zeros_like(a)
    prev_c = torch.zeros_like(a[:, 0])
    prev_d = torch.zeros_like(a[:, 0])
    for k in range(neq):
        denom = b[:, k] - a[:, k] * prev_c
        prev_c = c[:, k] / denom
        prev_d = (d[:, k] - a[:, k] * prev_d) / denom
        cp[:, k], dp[:, k] = prev_c, prev_d
    x = torch.zeros_like(a)
    nxt = torch.zeros_like(a[:, 0])
    for k in range(neq - 1, -1, -1):
        nxt = dp[:, k] - cp[:, k] * nxt
        x[:, k] = nxt
    return x.float()
