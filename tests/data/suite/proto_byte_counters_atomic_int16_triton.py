"""Planted bottleneck: atomic contention (every packet adds its length onto one of 8 protocol counters).

Per-protocol traffic accounting of a NetFlow/IPFIX collector: 8,388,608 captured packets, their wire
length (int16, 60-1,514 bytes) and a protocol class (int8: 0 TCP, 1 UDP, 2 ICMP, 3 GRE, 4 ESP, 5 SCTP,
6 IPv6-ICMP, 7 other; skewed, TCP ~60%, UDP ~30%), summed into 8 int64 byte counters with one
tl.atomic_add per packet (8,192 programs of 1,024). 8.4M atomics land on 8 addresses (in one or two
32-byte sectors): the L2's atomic unit serialises same-address updates, so the kernel runs at the rate
of the hottest counter (~5M updates on TCP's). Inputs are only 25 MB (~8 us at the roof).
The hypothesis: atomic_contention: L2 atomic throughput on one slice saturated while DRAM ~1% and SM%
low, lg-throttle / membar-like stalls, ~0.3-1.5 ms. The fix: a per-program tl.histogram-style local
reduction (8 sums per program, then 8 atomics per program).
"""

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
N = 1 << 23
CLASSES = 8
BLOCK = 1024


@triton.jit
def proto_bytes_kernel(len_ptr, proto_ptr, cnt_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    length = tl.load(len_ptr + offs, mask=m, other=0).to(tl.int64)
    proto = tl.load(proto_ptr + offs, mask=m, other=0).to(tl.int32)
    tl.atomic_add(cnt_ptr + proto, length, mask=m)


def make_inputs():
    g = torch.Generator(device=DEVICE)
    g.manual_seed(0)
    p = torch.tensor([0.60, 0.30, 0.02, 0.01, 0.03, 0.005, 0.015, 0.02], device=DEVICE)
    proto = torch.multinomial(p, N, replacement=True, generator=g).to(torch.int8)
    small = torch.rand(N, device=DEVICE, generator=g) < 0.45                     # ACKs / small datagrams
    length = torch.where(small, torch.randint(60, 120, (N,), device=DEVICE, generator=g),
                         torch.randint(120, 1515, (N,), device=DEVICE, generator=g))
    return length.to(torch.int16).contiguous(), proto.contiguous()


def run(length, proto):
    n = length.numel()
    cnt = torch.zeros(CLASSES, device=length.device, dtype=torch.int64)
    proto_bytes_kernel[(triton.cdiv(n, BLOCK),)](length, proto, cnt, n, BLOCK=BLOCK, num_warps=4)
    return cnt


def reference(length, proto):
    return torch.zeros(CLASSES, device=length.device, dtype=torch.int64).index_add_(0, proto.long(), length.long())
