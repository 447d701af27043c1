"""Planted bottleneck: memory bound (near miss for uncoalesced_global: stride-2 complex loads absorbed by L1/L2).

The transfer-function step of angular-spectrum propagation in a digital-holography / wave-optics code:
the FFT'd field of 4 planes of 4,096 x 4,096 complex64 samples (interleaved re, im: [4, 4096, 4096, 2]
fp32, 537 MB) multiplied by the Fresnel transfer function H(fx, fy) = exp(i pi lambda z (fx^2 + fy^2))
(precomputed, interleaved complex64, [4096, 4096, 2], 134 MB, the same for every plane), complex
product out (537 MB). Each program takes 2,048 complex samples and loads re and im as two stride-2
gathers (offsets 2i and 2i+1) of the field and of H: every warp request touches twice the sectors it
uses, but its partner request uses the other half of the same sectors straight from L1, so DRAM moves
only the bytes of the arrays. 32,768 programs of 4 warps. Bytes: 537 + 537 + 4 x 134 (H re-read per
plane; it does not fit in the 50 MB L2) = 1.61 GB, ~0.53 ms at 3.05 TB/s.
The hypothesis: memory_bound, DRAM ~80-90% of peak, L1 hit rate ~50% (the partner halves), ncu may
still flag 'uncoalesced' sector usage on the requests, but DRAM bytes ~1.0x of what is needed; the fix
(a [BLOCK, 2] tile load, or one kernel over all 4 planes per H element) saves the H re-reads only.
"""

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
PLANES = 4
NY = 4096
NX = 4096
BLOCK = 2048


@triton.jit
def asm_transfer_kernel(u_ptr, h_ptr, out_ptr, plane_size, BLOCK: tl.constexpr):
    plane = tl.program_id(1)
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < plane_size
    base = plane.to(tl.int64) * plane_size * 2
    ur = tl.load(u_ptr + base + 2 * offs, mask=m, other=0.0)
    ui = tl.load(u_ptr + base + 2 * offs + 1, mask=m, other=0.0)
    hr = tl.load(h_ptr + 2 * offs, mask=m, other=0.0)
    hi = tl.load(h_ptr + 2 * offs + 1, mask=m, other=0.0)
    tl.store(out_ptr + base + 2 * offs, ur * hr - ui * hi, mask=m)
    tl.store(out_ptr + base + 2 * offs + 1, ur * hi + ui * hr, mask=m)


def make_inputs():
    g = torch.Generator(device=DEVICE)
    g.manual_seed(0)
    u = torch.randn(PLANES, NY, NX, 2, device=DEVICE, generator=g)
    dx, lam, z = 3.45e-6, 532e-9, 0.05                                         # pixel pitch, wavelength, distance (m)
    fy = torch.fft.fftfreq(NY, d=dx, device=DEVICE, dtype=torch.float64)
    fx = torch.fft.fftfreq(NX, d=dx, device=DEVICE, dtype=torch.float64)
    phase = torch.pi * lam * z * (fy[:, None] ** 2 + fx[None, :] ** 2)
    h = torch.stack([torch.cos(phase), torch.sin(phase)], dim=-1).float()
    return u.contiguous(), h.contiguous()


def run(u, h):
    planes, ny, nx, _ = u.shape
    out = torch.empty_like(u)
    plane_size = ny * nx
    asm_transfer_kernel[(triton.cdiv(plane_size, BLOCK), planes)](u, h, out, plane_size, BLOCK=BLOCK, num_warps=4)
    return out


def reference(u, h):
    return torch.view_as_real(torch.view_as_complex(u) * torch.view_as_complex(h)[None])
