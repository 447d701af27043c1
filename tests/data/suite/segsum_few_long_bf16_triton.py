"""Planted bottleneck: small grid (a segmented sum over 48 long segments, one program per segment).

Sums of 48 variable-length segments of a bf16 array (lengths 1.5M..2.5M, multiples of 8, ~96M
values, 192 MB, given by int32 offsets; fp32 accumulation and output), as per-document or per-graph pooling over
a few huge groups does. One program (4 warps) per segment walks it in chunks of 2,048 values (two
16-byte loads per thread per chunk, fp32 accumulation in registers) and reduces once at the end.
48 programs on 132 SMs: 84 SMs get nothing, and each busy SM has only 4 warps with ~4 KB of loads in
flight per chunk, a few GB/s each; ~0.2-0.8 ms, where the 192 MB need ~63 us at 3.05 TB/s.
Expected: ncu's small-grid finding (0.36 programs per SM), DRAM far below its peak, SM nearly idle.
The fix is to split the segments across the machine: each program takes a fixed-size chunk of
the flat array and adds its per-segment partial sums (a segment spans many chunks) with one atomic
or a second pass, so that thousands of programs stream at the DRAM roof.
"""

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
SEGMENTS = 48
MIN_LEN, MAX_LEN = 1_500_000, 2_500_000
BLOCK = 2048


@triton.jit
def segsum_few_long_kernel(x_ptr, offsets_ptr, out_ptr, BLOCK: tl.constexpr):
    seg = tl.program_id(0)
    begin = tl.multiple_of(tl.load(offsets_ptr + seg).to(tl.int64), 8)  # lengths are multiples of 8:
    end = tl.multiple_of(tl.load(offsets_ptr + seg + 1).to(tl.int64), 8)  # 16-byte vector loads
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for i in range(0, end - begin, BLOCK):
        offs = begin + i + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + offs, mask=offs < end, other=0.0).to(tl.float32)
    tl.store(out_ptr + seg, tl.sum(acc, axis=0))


def make_inputs():
    g = torch.Generator(device=DEVICE)
    g.manual_seed(0)
    lengths = torch.randint(MIN_LEN // 8, MAX_LEN // 8 + 1, (SEGMENTS,), device=DEVICE, generator=g) * 8
    offsets = torch.zeros(SEGMENTS + 1, device=DEVICE, dtype=torch.int64)
    offsets[1:] = lengths.cumsum(0)
    x = torch.randn(int(offsets[-1]), device=DEVICE, generator=g).to(torch.bfloat16)
    return x, offsets.int()


def run(x, offsets):
    segments = offsets.numel() - 1
    out = torch.empty(segments, device=x.device, dtype=torch.float32)
    segsum_few_long_kernel[(segments,)](x, offsets, out, BLOCK=BLOCK, num_warps=4)
    return out


def reference(x, offsets):
    o = offsets.tolist()
    return torch.stack([x[o[s]:o[s + 1]].double().sum() for s in range(len(o) - 1)]).float()
