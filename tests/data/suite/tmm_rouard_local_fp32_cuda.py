"""Planted bottleneck: local memory (per-thread layer arrays indexed by a run-time layer count).

Reflectance spectra of candidate thin-film interference coatings (a needle / Monte-Carlo design loop for
a dielectric mirror): 2,048 candidate stacks of 40 alternating TiO2 / SiO2 layers (n = 2.35 / 1.46,
thicknesses fp32 [2048, 40], on glass n = 1.52, in air), each evaluated at 1,024 wavelengths from 380
to 1,100 nm at normal incidence: R = |Gamma|^2 (fp32 out, [2048, 1024]). One (stack, wavelength) per
thread: a first loop computes every layer's Fresnel coefficient r_k and double phase 2 delta_k =
4 pi n_k d_k / lambda (sincosf) into `float r[65], c2[64], s2[64]`, then Rouard's recursion runs from
the substrate outward, Gamma <- (r_k + Gamma e^{-2i delta_k}) / (1 + r_k Gamma e^{-2i delta_k}), reading
them back in reverse. The layer count is a run-time argument, so the loops cannot be unrolled and the
arrays live in local memory: 121 local stores + 121 local loads per thread, ~1.9 GB of local traffic
(per-lane interleaved, coalesced) for 8.7 MB of output; 2,048 threads x ~0.5 KB per SM overflow the L1,
so it reaches L2. 8,192 blocks of 256. The hypothesis: local-memory traffic dominating L1/L2 (ncu's
spill counters may read 0: arrays indexed at run time, not register spills), ~0.3-0.8 ms. The fix:
compute each layer's terms inside the backward loop (no arrays), or a compile-time layer count.
"""

import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>

#define MAXL 64

__global__ void __launch_bounds__(256) tmm_rouard(const float* __restrict__ thick, const float* __restrict__ nidx,
                                                  const float* __restrict__ lam, float* __restrict__ refl,
                                                  int stacks, int nw, int nl, float n_amb, float n_sub) {
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (long)stacks * nw) return;
    int s = (int)(i / nw), w = (int)(i % nw);
    float k0 = 4.0f * 3.14159265358979f / lam[w];
    float r[MAXL + 1], c2[MAXL], s2[MAXL];
    float nprev = n_amb;
    for (int k = 0; k < nl; ++k) {
        float nk = nidx[k];
        r[k] = (nprev - nk) / (nprev + nk);
        sincosf(k0 * nk * thick[(size_t)s * nl + k], &s2[k], &c2[k]);
        nprev = nk;
    }
    r[nl] = (nprev - n_sub) / (nprev + n_sub);
    float gr = r[nl], gi = 0.0f;
    for (int k = nl - 1; k >= 0; --k) {
        // g' = Gamma * e^{-2i delta_k}
        float pr = gr * c2[k] + gi * s2[k];
        float pi = gi * c2[k] - gr * s2[k];
        float rk = r[k];
        float ar = rk + pr, ai = pi;                   // numerator
        float br = 1.0f + rk * pr, bi = rk * pi;       // denominator
        float inv = 1.0f / (br * br + bi * bi);
        gr = (ar * br + ai * bi) * inv;
        gi = (ai * br - ar * bi) * inv;
    }
    refl[i] = gr * gr + gi * gi;
}

torch::Tensor reflectance(torch::Tensor thick, torch::Tensor nidx, torch::Tensor lam, double n_amb, double n_sub) {
    TORCH_CHECK(thick.dim() == 2 && thick.scalar_type() == torch::kFloat && thick.is_contiguous());
    TORCH_CHECK(nidx.scalar_type() == torch::kFloat && lam.scalar_type() == torch::kFloat && lam.is_contiguous());
    int stacks = thick.size(0), nl = thick.size(1), nw = lam.numel();
    TORCH_CHECK(nl <= MAXL && nidx.numel() == nl);
    auto refl = torch::empty({stacks, nw}, thick.options());
    long total = (long)stacks * nw;
    tmm_rouard<<<(unsigned)((total + 255) / 256), 256>>>(thick.data_ptr<float>(), nidx.data_ptr<float>(),
                                                         lam.data_ptr<float>(), refl.data_ptr<float>(), stacks, nw, nl,
                                                         (float)n_amb, (float)n_sub);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return refl;
}
"""

module = load_inline(
    "kls_tmm_rouard_local_fp32_cuda",
    cpp_sources="torch::Tensor reflectance(torch::Tensor thick, torch::Tensor nidx, torch::Tensor lam, double n_amb, "
    "double n_sub);",
    cuda_sources=CUDA_SRC,
    functions=["reflectance"],
    extra_cuda_cflags=["-O3", "-lineinfo"],
)

STACKS = 2048
LAYERS = 40
WAVES = 1024
N_AMB = 1.0
N_SUB = 1.52
TOLERANCE = 1e-4  # fp32 recursion over 40 layers; near-unity reflectance bands amplify rounding a little


def make_inputs():
    g = torch.Generator(device="cuda")
    g.manual_seed(0)
    nidx = torch.tensor([2.35, 1.46] * (LAYERS // 2), device="cuda", dtype=torch.float32)[:LAYERS]
    qw = 550.0 / (4.0 * nidx)                                                        # quarter-wave at 550 nm
    thick = qw[None, :] * (0.6 + 0.8 * torch.rand(STACKS, LAYERS, device="cuda", generator=g))   # nm
    lam = torch.linspace(380.0, 1100.0, WAVES, device="cuda")
    return thick.contiguous(), nidx.contiguous(), lam.contiguous()


def run(thick, nidx, lam):
    return module.reflectance(thick, nidx, lam, N_AMB, N_SUB)


def reference(thick, nidx, lam):
    n = nidx.double()
    nprev = torch.cat([torch.tensor([N_AMB], device=n.device, dtype=torch.float64), n[:-1]])
    r = (nprev - n) / (nprev + n)
    r_sub = (n[-1] - N_SUB) / (n[-1] + N_SUB)
    k0 = 4.0 * torch.pi / lam.double()
    gam = torch.full((thick.shape[0], lam.numel()), r_sub.item(), device=n.device, dtype=torch.complex128)
    for k in range(n.numel() - 1, -1, -1):
        phase = k0[None, :] * n[k] * thick[:, k].double()[:, None]
        p = gam * torch.exp(-1j * phase)
        gam = (r[k] + p) / (1.0 + r[k] * p)
    return (gam.abs() ** 2).float()
