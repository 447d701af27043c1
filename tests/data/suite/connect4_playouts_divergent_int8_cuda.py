"""Planted bottleneck: warp divergence (random Connect-4 playouts of different lengths from different roots in one warp).

The simulation phase of Monte Carlo tree search for Connect Four: 4,096 leaf positions (int8 boards
[leaf, 6, 7]: 0 empty, 1 / 2 the players' stones) picked by the tree policy at depths 0-24, 64 playout
threads per leaf, 24 random playouts per thread; each thread returns wins - losses for the side to
move (int32). A thread turns its board into two bitboards, then per ply draws a xorshift32 number,
picks the k-th legal column in a loop that exits at a data-dependent column, drops the stone and tests
the four line directions with early exits, until someone connects four or the board is full. Threads
are laid out leaf-fastest, so the 32 lanes of a warp play from 32 different leaves: a playout lasts
from 1 to ~40 plies (11.8 on average, but 30.1 for the longest lane of a warp, from a CPU run of the
same generator), the warp runs each of its 24 games until its longest lane is done while the finished
lanes idle (~39% of lanes busy at the ply level), and the column-selection loop and the win tests
diverge inside every ply. 262,144 threads (1,024 blocks of 256, one wave at full occupancy), 6.3M
playouts.
The hypothesis: warp_divergence: ~8-14 active threads per warp instruction (of 32), many divergent
branches, SM% moderate (~40-70%: issue slots spent on partly-masked warps), DRAM ~0, ~0.8-1.8 ms.
The fix: give each warp the playouts of one leaf and refill finished lanes with new playouts
(persistent lanes pulling work), and a branch-free column pick (popcount select).
"""

import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#include <stdint.h>

#define BOTTOM_ROW 0x0040810204081ULL    // bit col*7 for the 7 columns
#define BOARD_BITS 0x0FDFBF7EFDFBFULL    // the 42 playable cells (6 of every 7 bits)

__device__ __forceinline__ uint32_t xs32(uint32_t& s) {
    s ^= s << 13; s ^= s >> 17; s ^= s << 5;
    return s;
}

__device__ __forceinline__ bool four_in_row(uint64_t b) {
    uint64_t m = b & (b >> 7);            // horizontal (neighbouring columns)
    if (m & (m >> 14)) return true;
    m = b & (b >> 6);                     // diagonal
    if (m & (m >> 12)) return true;
    m = b & (b >> 8);                     // anti-diagonal
    if (m & (m >> 16)) return true;
    m = b & (b >> 1);                     // vertical
    if (m & (m >> 2)) return true;
    return false;
}

__global__ void __launch_bounds__(256) connect4_playouts(const int8_t* __restrict__ boards, int* __restrict__ score_out,
                                                        int leaves, int threads, int games, uint32_t seed) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= threads) return;
    const int8_t* b = boards + (size_t)(t % leaves) * 42;
    uint64_t p1 = 0, p2 = 0;
    int stones = 0;
    for (int r = 0; r < 6; ++r)
        for (int c = 0; c < 7; ++c) {
            int v = b[r * 7 + c];
            uint64_t bit = 1ULL << (c * 7 + r);
            if (v == 1) { p1 |= bit; ++stones; }
            if (v == 2) { p2 |= bit; ++stones; }
        }
    uint64_t mine0 = (stones & 1) ? p2 : p1;      // stones of the side to move
    uint64_t all0 = p1 | p2;
    bool lost0 = four_in_row(all0 ^ mine0);        // the previous move already won
    uint32_t s = (seed ^ ((uint32_t)t * 0x9E3779B9U)) | 1U;
    int score = 0;
    for (int g = 0; g < games; ++g) {
        if (lost0) { --score; continue; }
        uint64_t mine = mine0, all = all0;
        int n = stones, result = 0;
        bool root_side = true;                      // is the side to move the root's side?
        while (n < 42) {
            uint32_t legal = 0;
            for (int c = 0; c < 7; ++c)
                if (!(all & (1ULL << (c * 7 + 5)))) legal |= 1U << c;
            uint32_t k = xs32(s) % (uint32_t)__popc(legal);
            int col = 0;
            for (int c = 0; c < 7; ++c) {           // the k-th legal column
                if (legal & (1U << c)) {
                    if (k == 0) { col = c; break; }
                    --k;
                }
            }
            uint64_t colmask = 0x3FULL << (col * 7);
            uint64_t mv = (all + (1ULL << (col * 7))) & colmask;
            mine |= mv;
            all |= mv;
            ++n;
            if (four_in_row(mine)) { result = root_side ? 1 : -1; break; }
            mine ^= all;                            // the other side's stones
            root_side = !root_side;
        }
        score += result;
    }
    score_out[t] = score;
}

torch::Tensor playouts(torch::Tensor boards, int64_t threads, int64_t games, int64_t seed) {
    TORCH_CHECK(boards.is_cuda() && boards.scalar_type() == torch::kChar && boards.is_contiguous());
    TORCH_CHECK(boards.dim() == 3 && boards.size(1) == 6 && boards.size(2) == 7);
    int leaves = boards.size(0);
    auto out = torch::empty({threads}, boards.options().dtype(torch::kInt));
    connect4_playouts<<<(threads + 255) / 256, 256>>>(boards.data_ptr<int8_t>(), out.data_ptr<int>(), leaves,
                                                      (int)threads, (int)games, (uint32_t)seed);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

module = load_inline(
    "kls_connect4_playouts_divergent_int8_cuda",
    cpp_sources="torch::Tensor playouts(torch::Tensor boards, int64_t threads, int64_t games, int64_t seed);",
    cuda_sources=CUDA_SRC,
    functions=["playouts"],
    extra_cuda_cflags=["-O3", "-lineinfo"],
)

LEAVES = 4096
PER_LEAF = 64
GAMES = 24
MAX_DEPTH = 24
SEED = 7
M32 = 0xFFFFFFFF
COL_BITS = [c * 7 for c in range(7)]


def _four(b):
    m = b & (b >> 7)
    w = (m & (m >> 14)) != 0
    m = b & (b >> 6)
    w |= (m & (m >> 12)) != 0
    m = b & (b >> 8)
    w |= (m & (m >> 16)) != 0
    m = b & (b >> 1)
    w |= (m & (m >> 2)) != 0
    return w


def _legal(all_):
    cols = torch.tensor(COL_BITS, device=all_.device, dtype=torch.int64)
    return ((all_[:, None] >> (cols + 5)[None, :]) & 1) == 0                     # [N, 7]


def make_inputs():
    """Leaves: random games of 0-24 plies from the empty board, stopped before a move that would win."""
    g = torch.Generator(device="cuda")
    g.manual_seed(0)
    dev = "cuda"
    depth = torch.randint(0, MAX_DEPTH + 1, (LEAVES,), device=dev, generator=g)
    p = [torch.zeros(LEAVES, device=dev, dtype=torch.int64) for _ in range(2)]
    done = torch.zeros(LEAVES, device=dev, dtype=torch.bool)
    cols = torch.tensor(COL_BITS, device=dev, dtype=torch.int64)
    for ply in range(MAX_DEPTH):
        all_ = p[0] | p[1]
        active = (ply < depth) & ~done
        legal = _legal(all_)
        score = torch.rand(LEAVES, 7, device=dev, generator=g) * legal               # a random legal column
        col = score.argmax(1)
        mv = (all_ + (1 << cols[col])) & (0x3F << cols[col])
        side = ply % 2
        wins = _four(p[side] | mv)                                                   # leaves are never decided:
        p[side] = torch.where(active & ~wins, p[side] | mv, p[side])                 # a winning move ends the
        done |= active & wins                                                        # descent one ply earlier
    bits = torch.tensor([[c * 7 + r for c in range(7)] for r in range(6)], device=dev, dtype=torch.int64)
    board = ((p[0][:, None, None] >> bits) & 1) + 2 * ((p[1][:, None, None] >> bits) & 1)
    return (board.to(torch.int8).contiguous(),)


def run(boards):
    return module.playouts(boards, LEAVES * PER_LEAF, GAMES, SEED)


def reference(boards):
    dev = boards.device
    leaves = boards.shape[0]
    n = leaves * PER_LEAF
    t = torch.arange(n, device=dev, dtype=torch.int64)
    bits = torch.tensor([[c * 7 + r for c in range(7)] for r in range(6)], device=dev, dtype=torch.int64)
    bb = boards.long()[t % leaves]                                                  # [n, 6, 7]
    p1 = ((bb == 1).long() << bits).sum((1, 2))
    p2 = ((bb == 2).long() << bits).sum((1, 2))
    stones = (bb != 0).sum((1, 2))
    mine0 = torch.where(stones % 2 == 1, p2, p1)
    all0 = p1 | p2
    lost0 = _four(all0 ^ mine0)
    s = ((SEED ^ ((t * 0x9E3779B9) & M32)) | 1) & M32
    cols = torch.tensor(COL_BITS, device=dev, dtype=torch.int64)
    score = torch.zeros(n, device=dev, dtype=torch.int64)
    for _ in range(GAMES):
        mine, all_, nst = mine0.clone(), all0.clone(), stones.clone()
        live = ~lost0 & (nst < 42)
        result = torch.where(lost0, -1, 0)
        root_side = torch.ones(n, device=dev, dtype=torch.bool)
        for _ply in range(42):
            if not bool(live.any()):
                break
            legal = _legal(all_)
            s_new = s ^ ((s << 13) & M32)
            s_new = s_new ^ (s_new >> 17)
            s_new = s_new ^ ((s_new << 5) & M32)
            s = torch.where(live, s_new, s)
            k = s % legal.sum(1).clamp(min=1)
            rank = torch.cumsum(legal.long(), 1) - 1                                     # rank among legal columns
            col = (legal & (rank == k[:, None])).long().argmax(1)
            mv = (all_ + (1 << cols[col])) & (0x3F << cols[col])
            mine_mv = mine | mv
            all_mv = all_ | mv
            won = live & _four(mine_mv)
            result = torch.where(won, torch.where(root_side, 1, -1), result)
            cont = live & ~won
            mine = torch.where(cont, mine_mv ^ all_mv, mine)
            all_ = torch.where(cont, all_mv, all_)
            nst = nst + cont.long()
            root_side = torch.where(cont, ~root_side, root_side)
            live = cont & (nst < 42)
        score += result
    return score.to(torch.int32)
