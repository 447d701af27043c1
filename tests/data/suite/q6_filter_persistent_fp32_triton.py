"""Already good (near_roof), a near miss for small grid / low occupancy: a persistent column-scan filter (TPC-H Q6's predicate).

Evaluates the WHERE clause of TPC-H query 6 over 67,108,864 lineitem rows stored as columns: shipdate
(int32 days) in [1994-01-01, 1995-01-01), discount (fp32) in [0.05, 0.07], quantity (fp32) < 24, and
writes one uint8 flag per row: 13 bytes per row, 872 MB, ~286 us at 3.05 TB/s. The grid is persistent,
one program per SM (132), each looping over 8,192-row tiles (tile = pid, pid + 132, ...; 62-63 tiles
each); a program is 16 warps holding 16 rows of each column per thread, i.e. twelve 16-byte loads per
thread and 96 KB of loads in flight per SM, 4x what DRAM needs in flight to stream at its peak (~3 TB/s
x ~1 us = ~3 MB over 132 SMs). The source looks like a small grid with one program per SM (16 of 64 warp
slots used; triton 3.6: 34 registers, so 3 programs would fit, 75% theoretical) and ncu may say so
(achieved occupancy ~25%), but every byte is read once, coalesced and vectorised, and the kernel should
sit at the DRAM roof. The hypothesis: DRAM >= 80% of peak moving ~1.0x the needed bytes, SM% low;
nothing to fix in the code (fewer or narrower columns would change the problem).
"""

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
ROWS = 1 << 26
BLOCK = 8192
DATE_LO, DATE_HI = 8766, 9131  # 1994-01-01 and 1995-01-01 as days since 1970-01-01


def num_programs():
    return torch.cuda.get_device_properties(0).multi_processor_count if torch.cuda.is_available() else 4


@triton.jit
def q6_filter_kernel(ship_ptr, disc_ptr, qty_ptr, flag_ptr, n, date_lo, date_hi, BLOCK: tl.constexpr):
    num_tiles = tl.cdiv(n, BLOCK)
    for tile in range(tl.program_id(0), num_tiles, tl.num_programs(0)):  # persistent: grid = number of SMs
        offs = tile * BLOCK + tl.arange(0, BLOCK)  # < 2^31 for this table
        mask = offs < n
        ship = tl.load(ship_ptr + offs, mask=mask, other=0)
        disc = tl.load(disc_ptr + offs, mask=mask, other=0.0)
        qty = tl.load(qty_ptr + offs, mask=mask, other=0.0)
        keep = (ship >= date_lo) & (ship < date_hi) & (disc >= 0.05) & (disc <= 0.07) & (qty < 24.0)
        tl.store(flag_ptr + offs, keep.to(tl.uint8), mask=mask)


def make_inputs():
    g = torch.Generator(device=DEVICE)
    g.manual_seed(0)
    ship = torch.randint(8036, 10592, (ROWS,), device=DEVICE, generator=g, dtype=torch.int32)  # 1992-01-01..1998-12-31
    disc = torch.randint(0, 11, (ROWS,), device=DEVICE, generator=g).float() / 100.0  # 0.00 .. 0.10
    qty = torch.randint(1, 51, (ROWS,), device=DEVICE, generator=g).float()  # 1 .. 50
    return ship, disc, qty


def run(ship, disc, qty):
    n = ship.numel()
    flags = torch.empty(n, device=ship.device, dtype=torch.uint8)
    programs = min(num_programs(), triton.cdiv(n, BLOCK))
    q6_filter_kernel[(programs,)](ship, disc, qty, flags, n, DATE_LO, DATE_HI, BLOCK=BLOCK, num_warps=16)
    return flags


def reference(ship, disc, qty):
    keep = (ship >= DATE_LO) & (ship < DATE_HI) & (disc >= 0.05) & (disc <= 0.07) & (qty < 24.0)
    return keep.to(torch.uint8)
