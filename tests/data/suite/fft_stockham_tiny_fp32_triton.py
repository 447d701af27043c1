"""Planted bottleneck: launch overhead (a small complex FFT done as 12 radix-2 Stockham stage launches).

Forward DFTs of 4 complex signals of 4,096 points (planar fp32: real and imaginary parts in a
[2, 4, 4096] tensor, 128 KB) by the radix-2 Stockham autosort algorithm, one kernel launch per
stage: each launch reads the 2,048 butterfly pairs of every signal, multiplies the odd half by its
twiddle (from a 2,048-entry table), and writes both outputs to their sorted places in the other
buffer. 12 launches of 8 programs, each moving 256 KB (mostly L2 hits after the first) and doing
~100K flops: each kernel takes a few microseconds, almost all of it launch and ramp-up of a grid
that fills 8 of 132 SMs for a moment; run() is ~12 x (launch + ~3 us). The profiled kernel is the
first stage. Nothing inside a stage is worth tuning; the fix is fewer, fatter launches: all 12
stages in one program per signal (the signal fits in registers/shared memory), batching many more
signals per call, or a CUDA graph / cuFFT plan.
"""

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
SIGNALS, POINTS = 4, 4096
BLOCK = 1024  # butterflies per program


@triton.jit
def fft_stockham_stage_kernel(xr_ptr, xi_ptr, yr_ptr, yi_ptr, twr_ptr, twi_ptr, ns,
                              N: tl.constexpr, BLOCK: tl.constexpr):
    sig = tl.program_id(1)
    j = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)  # butterfly index in [0, N/2)
    mask = j < N // 2
    base = sig * N
    r = j % ns                                           # position inside the current sub-transform
    t = r * ((N // 2) // ns)                             # twiddle exp(-2 pi i r / (2 ns)) = table[r * N / (2 ns)]
    wr = tl.load(twr_ptr + t, mask=mask, other=1.0)
    wi = tl.load(twi_ptr + t, mask=mask, other=0.0)
    ar = tl.load(xr_ptr + base + j, mask=mask, other=0.0)
    ai = tl.load(xi_ptr + base + j, mask=mask, other=0.0)
    br = tl.load(xr_ptr + base + j + N // 2, mask=mask, other=0.0)
    bi = tl.load(xi_ptr + base + j + N // 2, mask=mask, other=0.0)
    tr = br * wr - bi * wi
    ti = br * wi + bi * wr
    o = base + (j // ns) * (2 * ns) + r
    tl.store(yr_ptr + o, ar + tr, mask=mask)
    tl.store(yi_ptr + o, ai + ti, mask=mask)
    tl.store(yr_ptr + o + ns, ar - tr, mask=mask)
    tl.store(yi_ptr + o + ns, ai - ti, mask=mask)


def make_inputs():
    torch.manual_seed(0)
    x = torch.randn(2, SIGNALS, POINTS, device=DEVICE)  # [real/imag, signal, point]
    k = torch.arange(POINTS // 2, device=DEVICE, dtype=torch.float64)
    angle = -2.0 * torch.pi * k / POINTS
    return x, angle.cos().float(), angle.sin().float()


def run(x, twr, twi):
    signals, n = x.shape[1], x.shape[2]
    bufs = [torch.empty_like(x), torch.empty_like(x)]
    src, ns, stage = x, 1, 0
    grid = (triton.cdiv(n // 2, BLOCK), signals)
    while ns < n:  # log2(n) launches, ping-ponging between two buffers
        dst = bufs[stage % 2]
        fft_stockham_stage_kernel[grid](src[0], src[1], dst[0], dst[1], twr, twi, ns, N=n, BLOCK=BLOCK, num_warps=4)
        src, ns, stage = dst, ns * 2, stage + 1
    return src


def reference(x, twr, twi):
    X = torch.fft.fft(torch.complex(x[0].double(), x[1].double()), dim=-1)
    return torch.stack([X.real, X.imag]).float()
