"""Planted bottleneck: uncoalesced global access (NMO correction with the traces across the lanes).

Normal-moveout correction of 65,536 seismic traces of 1,024 samples (fp16, trace-major [trace, sample]
as read from SEG-Y: 134 MB in, 134 MB out): out[tr, t0] = linear interpolation of in[tr, :] at
s = sqrt(t0^2 + A_tr W_t0) samples (A_tr = (offset / dt)^2 per trace, W_t0 = 1 / v(t0)^2 from the
velocity function). The program holds 32 traces in its vector (one per lane, 1 warp) and walks 256
output samples t0 in order, because the offset term is per trace: each step's two loads and one store
touch 32 traces whose samples are 2,048 B apart, so every warp request spans 32 sectors for 64 useful
bytes (2 of 32 bytes per sector). The loads mostly hit L1 on later steps (a lane's next samples sit in
the same sector), the 2-byte stores go to L2 as 32 partial sectors per request: ~25M requests x 32
sectors, ~0.5-1.5 ms against ~90 us for the 268 MB. The hypothesis: ncu's UncoalescedGlobalAccess with
~32 sectors per request, L1/L2 busy, DRAM low. The fix: the samples across the lanes (a program per
trace or per few traces, t0 in the vector): contiguous loads and stores.
"""

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
TRACES = 65536
NT = 1024
DT = 0.004          # s
TILE_T = 256        # output samples per program
BLOCK_TR = 32


@triton.jit
def nmo_lanes_kernel(x_ptr, a_ptr, w_ptr, out_ptr, traces, nt, TILE_T: tl.constexpr, BLOCK_TR: tl.constexpr):
    tr = tl.program_id(0) * BLOCK_TR + tl.arange(0, BLOCK_TR)
    mtr = tr < traces
    row = tr.to(tl.int64) * nt
    a = tl.load(a_ptr + tr, mask=mtr, other=0.0)
    t_start = tl.program_id(1) * TILE_T
    for k in range(TILE_T):
        t0 = t_start + k
        w = tl.load(w_ptr + t0)               # nt is a multiple of TILE_T (run checks)
        tf = t0.to(tl.float32)
        s = tl.sqrt(tf * tf + a * w)
        i0 = s.to(tl.int32)                 # s >= 0: truncation is floor
        f = s - i0.to(tl.float32)
        m0 = mtr & (i0 < nt)
        m1 = mtr & (i0 + 1 < nt)
        g0 = tl.load(x_ptr + row + i0, mask=m0, other=0.0).to(tl.float32)
        g1 = tl.load(x_ptr + row + i0 + 1, mask=m1, other=0.0).to(tl.float32)
        tl.store(out_ptr + row + t0, ((1.0 - f) * g0 + f * g1).to(tl.float16), mask=mtr)


def make_inputs():
    g = torch.Generator(device=DEVICE)
    g.manual_seed(0)
    # band-limited traces: white noise smoothed by a 9-tap window, last 64 samples zero (record end)
    raw = torch.randn(TRACES, NT + 8, device=DEVICE, generator=g)
    x = raw.unfold(1, 9, 1).mean(-1)[:, :NT].clone()
    x[:, NT - 64 :] = 0.0
    offset = 50.0 + torch.rand(TRACES, device=DEVICE, generator=g) * 4000.0    # m
    a = (offset / DT) ** 2
    t0 = torch.arange(NT, device=DEVICE, dtype=torch.float32) * DT
    v = 1500.0 + 1000.0 * t0                                                    # m/s
    w = 1.0 / v**2
    return x.half().contiguous(), a.float().contiguous(), w.float().contiguous()


def run(x, a, w):
    traces, nt = x.shape
    assert nt % TILE_T == 0
    out = torch.empty_like(x)
    grid = (triton.cdiv(traces, BLOCK_TR), triton.cdiv(nt, TILE_T))
    nmo_lanes_kernel[grid](x, a, w, out, traces, nt, TILE_T=TILE_T, BLOCK_TR=BLOCK_TR, num_warps=1)
    return out


def reference(x, a, w):
    traces, nt = x.shape
    out = torch.empty_like(x)
    t0 = torch.arange(nt, device=x.device, dtype=torch.float64)
    for c0 in range(0, traces, 8192):   # chunks keep the float64 temporaries small
        xc = x[c0 : c0 + 8192].double()
        s = torch.sqrt(t0[None, :] ** 2 + a[c0 : c0 + 8192].double()[:, None] * w.double()[None, :])
        i0 = torch.floor(s).long()
        f = s - i0
        xp = torch.cat([xc, torch.zeros(xc.shape[0], 2, device=x.device, dtype=torch.float64)], dim=1)
        i0c = i0.clamp(max=nt)
        g0 = torch.gather(xp, 1, i0c)
        g1 = torch.gather(xp, 1, (i0c + 1).clamp(max=nt))
        out[c0 : c0 + 8192] = ((1.0 - f) * g0 + f * g1).half()
    return out
