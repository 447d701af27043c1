"""Planted bottleneck: memory bound through L2 (a lagged autocorrelation that re-reads the series once per lag).

Autocorrelation sums acf[l] = sum_t x[t] x[t + l] for the 32 lags l = 8, 16, ..., 256 (a seasonal-lag
feature set) of one 33,554,432-sample fp16 series (64 MB, stored with 256 trailing zeros so that no
load needs a lag-dependent mask). The grid is (lag, chunk) with the lag fastest, so the 32 programs of
one 8,192-sample chunk run side by side and each loads its chunk and the chunk shifted by its lag (two
16 KB loads, 16-byte vectors: lags are multiples of 8 samples), reduces the products in fp32 and adds
the result to acf[lag] with one atomic. DRAM sees the series about once (~67 MB, ~22 us at 3.05 TB/s:
the neighbouring lag programs hit L2), but L2 -> SM traffic is 32 lags x 2 loads x 64 MB = 4.3 GB,
~0.4-0.7 ms at L2's rate. A lure: 131,072 atomics land on 32 addresses (4,096 each), but one per
program, spread over the run: a few per microsecond per address, far from serialising. The hypothesis:
L2 (lts) the busiest unit, DRAM low (~5-15%), SM% low; the fix is to load each chunk once and compute
all 32 lags from registers or shared memory (a 32x reuse), i.e. fewer bytes through L2.
"""

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
N = 1 << 25
LAGS = 32
LAG_STEP = 8
BLOCK = 8192
TAPS = 64  # smoothing of the white noise that makes the series (all acf values positive and large)
TOLERANCE = 1e-4  # fp32 atomics in any order


@triton.jit
def acf_lag_kernel(x_ptr, acf_ptr, n, LAG_STEP: tl.constexpr, BLOCK: tl.constexpr):
    lag = (tl.program_id(0) + 1) * LAG_STEP
    offs = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n  # x holds n + LAGS * LAG_STEP samples, the tail zeros: x[t + lag] needs no mask of its own
    a = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(x_ptr + offs + lag, mask=mask, other=0.0).to(tl.float32)
    tl.atomic_add(acf_ptr + tl.program_id(0), tl.sum(a * b, axis=0))


def make_inputs():
    g = torch.Generator(device=DEVICE)
    g.manual_seed(0)
    w = torch.randn(1, 1, N + TAPS - 1, device=DEVICE, generator=g)
    k = (0.95 ** torch.arange(TAPS, device=DEVICE, dtype=torch.float32)).view(1, 1, TAPS)
    x = torch.zeros(N + LAGS * LAG_STEP, device=DEVICE, dtype=torch.float16)
    x[:N] = (torch.nn.functional.conv1d(w, k).view(N) * 0.3).half()
    return (x,)


def run(x):
    n = x.numel() - LAGS * LAG_STEP
    acf = torch.zeros(LAGS, device=x.device, dtype=torch.float32)
    acf_lag_kernel[(LAGS, triton.cdiv(n, BLOCK))](x, acf, n, LAG_STEP=LAG_STEP, BLOCK=BLOCK, num_warps=8)
    return acf


def reference(x):
    xd = x[: x.numel() - LAGS * LAG_STEP].double()
    lags = range(LAG_STEP, (LAGS + 1) * LAG_STEP, LAG_STEP)
    return torch.stack([(xd[:-lag] * xd[lag:]).sum() for lag in lags]).float()
