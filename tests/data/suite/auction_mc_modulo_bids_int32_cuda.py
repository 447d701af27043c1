"""Planted bottleneck: compute bound (integer: a hash and a run-time modulo per simulated bid; near miss for uncoalesced_global).

Revenue estimation for a second-price ad auction with reserve prices: 1,048,576 auctions (ad
slots), each with 16 bidders whose bids are drawn, in integer micro-cents, as base_k + U(0, spread_k)
over 32 Monte Carlo rounds. The uniform draw is a 32-bit integer hash of (auction, round, bidder)
reduced with a run-time modulo by spread_k (a 32-bit unsigned division in software: ~20 integer
instructions), then the round's highest and second-highest bids are kept with compares (predicated
selects) and the revenue max(second, reserve) (if the highest clears the reserve) is summed (int32
out, exact). One thread per auction reads its bidders' base and spread from row-major [AUCTIONS, 16]
int32 tables: the lanes are 64 bytes apart, so each load touches 32 sectors, but the thread reads
its whole row in order and the rows stay in L1 (16 loads use the 2 sectors of each lane): the DRAM
bytes are the 134 MB of tables once (the 16 bases and spreads are then kept in registers for the 32
rounds: ptxas reports 77 registers, 3 blocks of 256 = 24 warps per SM, but the 16 bidders' hashes are
independent, so ILP keeps the integer pipes fed). 4,096 blocks of 256; 537M draws, ~45 integer
instructions each (~750M warp instructions).
The hypothesis: compute_bound: ALU / FMA (IMAD) pipes ~70-90%, issue ~85-95% busy, SM% ~85-95%, DRAM
~10-20%, UncoalescedGlobalAccess may fire on the table loads (8 sectors per request) with L1 hit
~85-95% and no extra DRAM bytes, ~0.6-1.0 ms. The fix: Lemire's multiply-shift range reduction
(one IMAD.HI instead of the division) and a cheaper hash.
"""

import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>

#define BIDDERS 16

__device__ __forceinline__ unsigned int lowbias32(unsigned int x) {
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

__global__ void auction_revenue(const int* __restrict__ base, const int* __restrict__ spread,
                                const int* __restrict__ reserve, int* __restrict__ revenue, int n, int rounds) {
    int a = blockIdx.x * blockDim.x + threadIdx.x;
    if (a >= n) return;
    const int* b = base + (long)a * BIDDERS;
    const int* s = spread + (long)a * BIDDERS;
    int res = reserve[a];
    int total = 0;
    unsigned int key = (unsigned int)a * 0x9E3779B9u;
    for (int r = 0; r < rounds; ++r) {
        int first = 0, second = 0;
        for (int k = 0; k < BIDDERS; ++k) {
            unsigned int h = lowbias32(key ^ (unsigned int)(r * BIDDERS + k) * 0x85EBCA6Bu);
            int bid = b[k] + (int)(h % (unsigned int)s[k]);
            if (bid > first) { second = first; first = bid; }
            else if (bid > second) second = bid;
        }
        if (first >= res) total += max(second, res);
    }
    revenue[a] = total;
}

torch::Tensor simulate(torch::Tensor base, torch::Tensor spread, torch::Tensor reserve, int64_t rounds) {
    TORCH_CHECK(base.is_cuda() && base.scalar_type() == torch::kInt && base.size(1) == BIDDERS && base.is_contiguous());
    TORCH_CHECK(spread.scalar_type() == torch::kInt && spread.sizes() == base.sizes() && spread.is_contiguous());
    int n = base.size(0);
    auto rev = torch::empty({n}, base.options());
    auction_revenue<<<(n + 255) / 256, 256>>>(base.data_ptr<int>(), spread.data_ptr<int>(), reserve.data_ptr<int>(),
                                              rev.data_ptr<int>(), n, (int)rounds);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return rev;
}
"""

module = load_inline(
    "kls_auction_mc_modulo_bids_int32_cuda",
    cpp_sources="torch::Tensor simulate(torch::Tensor base, torch::Tensor spread, torch::Tensor reserve, int64_t rounds);",
    cuda_sources=CUDA_SRC,
    functions=["simulate"],
    extra_cuda_cflags=["-O3", "-lineinfo"],
)

AUCTIONS = 1 << 20
BIDDERS = 16
ROUNDS = 32
M32 = 0xFFFFFFFF


def make_inputs():
    g = torch.Generator(device="cuda")
    g.manual_seed(0)
    slot_value = torch.randint(200, 5000, (AUCTIONS, 1), device="cuda", generator=g)      # micro-cents
    base = (slot_value * (0.3 + 0.5 * torch.rand(AUCTIONS, BIDDERS, device="cuda", generator=g))).int()
    spread = (slot_value * (0.1 + 0.6 * torch.rand(AUCTIONS, BIDDERS, device="cuda", generator=g))).int() + 1
    reserve = (slot_value[:, 0] * 0.6).int()
    return base.contiguous(), spread.contiguous(), reserve.contiguous()


def run(base, spread, reserve):
    return module.simulate(base, spread, reserve, ROUNDS)


def _lowbias32(x):
    x = x ^ (x >> 16)
    x = (x * 0x7FEB352D) & M32
    x = x ^ (x >> 15)
    x = (x * 0x846CA68B) & M32
    return x ^ (x >> 16)


def reference(base, spread, reserve):
    n = base.shape[0]
    b, s, res = base.long(), spread.long(), reserve.long()
    key = (torch.arange(n, device=base.device, dtype=torch.int64) * 0x9E3779B9) & M32
    kk = torch.arange(BIDDERS, device=base.device, dtype=torch.int64)
    total = torch.zeros(n, dtype=torch.int64, device=base.device)
    for r in range(ROUNDS):
        salt = ((r * BIDDERS + kk) * 0x85EBCA6B) & M32
        h = _lowbias32(key[:, None] ^ salt[None, :])
        bid = b + h % s                                           # [n, BIDDERS]
        top2 = bid.topk(2, dim=1).values
        first, second = top2[:, 0], top2[:, 1]
        total += torch.where(first >= res, torch.maximum(second, res), torch.zeros_like(res))
    return total.int()
