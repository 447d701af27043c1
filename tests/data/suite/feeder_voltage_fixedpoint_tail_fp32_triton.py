"""Planted bottleneck: tail effect (1.25 waves of long, equal programs).

Probabilistic load flow for distribution planning: 337,920 (feeder, load scenario) pairs, each a
feeder reduced to its Thevenin equivalent (source voltage E, impedance R + jX, per unit) feeding a
constant-power load P + jQ drawn from a scenario. The load-bus voltage is found by the classic
fixed-point (Gauss / backward-forward sweep on one section) V <- E - Z conj(S / V), 1,500 iterations
(a fixed count, as GPU sweeps do), fp32; output Re V and Im V ([2, 337,920] fp32). One pair per thread,
programs of 256 (BLOCK 256, 8 warps): ~20 registers, so 8 programs (64 warps) fit per SM and one wave
is 132 x 8 = 1,056 programs; the grid is 1,320 programs = 1.25 waves: the first wave runs every SM
full, the second only 264 programs (2 per SM) for the same long time.
The hypothesis: tail_effect: ncu's Tail Effect / wave count (1.25 waves) with every program equally
long (~1,500 x ~16 instructions per thread), SM% high during the first wave but ~60% overall,
DRAM ~0%, ~0.3-0.6 ms. The fix: size the batch to whole waves (or split pairs over more, shorter
programs, or a persistent loop over pairs).
"""

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
PROGRAMS = 1320
BLOCK = 256
ITERS = 1500


@triton.jit
def feeder_voltage_kernel(e_ptr, r_ptr, x_ptr, p_ptr, q_ptr, out_ptr, n, iters, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    e = tl.load(e_ptr + offs, mask=m, other=1.0)
    r = tl.load(r_ptr + offs, mask=m, other=0.0)
    x = tl.load(x_ptr + offs, mask=m, other=0.0)
    p = tl.load(p_ptr + offs, mask=m, other=0.0)
    q = tl.load(q_ptr + offs, mask=m, other=0.0)
    vr = e
    vi = tl.zeros_like(e)
    for _ in range(iters):
        inv = 1.0 / (vr * vr + vi * vi)
        ir = (p * vr + q * vi) * inv          # I = conj(S / V) = (P - jQ) / conj(V)
        ii = (p * vi - q * vr) * inv
        vr = e - (r * ir - x * ii)
        vi = -(r * ii + x * ir)
    tl.store(out_ptr + offs, vr, mask=m)
    tl.store(out_ptr + n + offs, vi, mask=m)


def make_inputs():
    g = torch.Generator(device=DEVICE)
    g.manual_seed(0)
    n = PROGRAMS * BLOCK
    e = 1.0 + 0.05 * torch.rand(n, device=DEVICE, generator=g)                   # tap position, p.u.
    r = 0.02 + 0.08 * torch.rand(n, device=DEVICE, generator=g)
    x = 0.05 + 0.15 * torch.rand(n, device=DEVICE, generator=g)
    p = 0.2 + 0.8 * torch.rand(n, device=DEVICE, generator=g)                     # scenario load
    q = p * (0.1 + 0.4 * torch.rand(n, device=DEVICE, generator=g))               # power factor ~0.9-0.99
    return tuple(t.contiguous() for t in (e, r, x, p, q))


def run(e, r, x, p, q):
    n = e.numel()
    out = torch.empty((2, n), device=e.device, dtype=torch.float32)
    feeder_voltage_kernel[(triton.cdiv(n, BLOCK),)](e, r, x, p, q, out, n, ITERS, BLOCK=BLOCK, num_warps=8)
    return out


def reference(e, r, x, p, q):
    e, r, x, p, q = (t.double() for t in (e, r, x, p, q))
    vr, vi = e.clone(), torch.zeros_like(e)
    for _ in range(ITERS):
        inv = 1.0 / (vr * vr + vi * vi)
        ir = (p * vr + q * vi) * inv
        ii = (p * vi - q * vr) * inv
        vr, vi = e - (r * ir - x * ii), -(r * ii + x * ir)
    return torch.stack([vr, vi]).float()
