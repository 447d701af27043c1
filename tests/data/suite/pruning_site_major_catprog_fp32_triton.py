"""Planted bottleneck: uncoalesced global access (one rate category per program over site-major partials: half of every sector).

Felsenstein pruning at one internal node of a phylogeny under a GTR+Gamma(4) nucleotide model: for
every alignment site and rate category c, parent[s, c, i] = (sum_j P1[c, i, j] L1[s, c, j]) *
(sum_j P2[c, i, j] L2[s, c, j]), with the children's conditional likelihoods laid out site-major as a
CPU likelihood library keeps them (fp32 [site, category, state]: a 64-byte record per site), 2,097,152
site patterns (134 MB per partials array, 403 MB needed in all). The kernel was parallelised the way the
CPU loop was written, one rate category per program: program (site block, c) loads the four states of
category c of 256 sites as four scalar loads each (lanes 64 bytes apart: a warp request spans 2 KB for
128 useful bytes) and stores four scalars likewise. Site blocks vary fastest in the grid, so all
category-0 programs run before category 1: categories 0 and 1 (and 2 and 3) share each 32-byte sector,
which is fetched from DRAM once per category (L2 long evicted in between), and the output sectors are
written in halves at different times.
The hypothesis: uncoalesced_global: ~8 of 32 bytes used per sector per request (32 sectors per request),
DRAM bytes ~2x the needed (~0.8-0.9 GB), DRAM ~60-85%, SM% low, ~0.3-0.4 ms vs ~0.13 ms for the needed
bytes. The fix: one program per site block handling all four categories (load the 64-byte records as a
[BLOCK, 16] tile, 16-byte vectors), or a category-major layout [category, site, state].
"""

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
SITES = 2097152
CATS = 4
BLOCK = 256


@triton.jit
def pruning_kernel(l1_ptr, l2_ptr, p1_ptr, p2_ptr, out_ptr, sites, CATS: tl.constexpr, BLOCK: tl.constexpr):
    c = tl.program_id(1)
    s = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = s < sites
    rec = s.to(tl.int64) * (CATS * 4) + c * 4
    a0 = tl.load(l1_ptr + rec + 0, mask=m, other=0.0)
    a1 = tl.load(l1_ptr + rec + 1, mask=m, other=0.0)
    a2 = tl.load(l1_ptr + rec + 2, mask=m, other=0.0)
    a3 = tl.load(l1_ptr + rec + 3, mask=m, other=0.0)
    b0 = tl.load(l2_ptr + rec + 0, mask=m, other=0.0)
    b1 = tl.load(l2_ptr + rec + 1, mask=m, other=0.0)
    b2 = tl.load(l2_ptr + rec + 2, mask=m, other=0.0)
    b3 = tl.load(l2_ptr + rec + 3, mask=m, other=0.0)
    for i in tl.static_range(4):
        pm = p1_ptr + c * 16 + i * 4
        qm = p2_ptr + c * 16 + i * 4
        left = tl.load(pm) * a0 + tl.load(pm + 1) * a1 + tl.load(pm + 2) * a2 + tl.load(pm + 3) * a3
        right = tl.load(qm) * b0 + tl.load(qm + 1) * b1 + tl.load(qm + 2) * b2 + tl.load(qm + 3) * b3
        tl.store(out_ptr + rec + i, left * right, mask=m)


def _gtr_gamma_p(t, rates, freqs, exch, device):
    """P(t * r_c) for the 4 gamma categories, float64 [4, 4, 4]."""
    q = torch.zeros(4, 4, dtype=torch.float64, device=device)
    iu = torch.triu_indices(4, 4, 1, device=device)
    q[iu[0], iu[1]] = exch
    q = q + q.T
    q = q * freqs[None, :]
    q = q - torch.diag(q.sum(1))
    q = q / -(torch.diagonal(q) * freqs).sum()                                 # one substitution per unit time
    return torch.matrix_exp(q[None] * (t * rates)[:, None, None])


def make_inputs():
    g = torch.Generator(device=DEVICE)
    g.manual_seed(0)
    freqs = torch.tensor([0.3, 0.2, 0.2, 0.3], dtype=torch.float64, device=DEVICE)
    exch = torch.tensor([1.0, 4.0, 1.2, 0.9, 4.5, 1.0], dtype=torch.float64, device=DEVICE)  # AC AG AT CG CT GT
    rates = torch.tensor([0.137, 0.477, 1.0, 2.386], dtype=torch.float64, device=DEVICE)     # gamma(alpha=0.5), means
    rates = rates / rates.mean()
    p1 = _gtr_gamma_p(0.08, rates, freqs, exch, DEVICE).float()
    p2 = _gtr_gamma_p(0.21, rates, freqs, exch, DEVICE).float()
    l1 = torch.rand(SITES, CATS, 4, device=DEVICE, generator=g) ** 4                      # child partials in (0, 1)
    l2 = torch.rand(SITES, CATS, 4, device=DEVICE, generator=g) ** 4
    return l1.contiguous(), l2.contiguous(), p1.contiguous(), p2.contiguous()


def run(l1, l2, p1, p2):
    sites = l1.shape[0]
    out = torch.empty_like(l1)
    pruning_kernel[(triton.cdiv(sites, BLOCK), CATS)](l1, l2, p1, p2, out, sites, CATS=CATS, BLOCK=BLOCK, num_warps=4)
    return out


def reference(l1, l2, p1, p2):
    left = torch.einsum("cij,scj->sci", p1.double(), l1.double())
    right = torch.einsum("cij,scj->sci", p2.double(), l2.double())
    return (left * right).float()
