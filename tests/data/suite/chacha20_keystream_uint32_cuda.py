"""Planted bottleneck: compute bound (a ChaCha20 keystream: 20 rounds of 32-bit add / xor / rotate per 64-byte block).

Generates 256 MiB of ChaCha20 keystream (RFC 8439 block function: 256-bit key, 96-bit nonce, 32-bit
block counter), e.g. a one-time pad or a CSPRNG's output: one thread per 64-byte block builds the
16-word state, runs the 10 double rounds (80 quarter rounds of 4 adds, 4 xors and 4 rotates), adds the
input state back and writes its 64 bytes (four 16-byte stores). The state stays in registers (every
index is known at compile time): 40 registers, 0 spills (nvcc 13, sm_90). Per block ptxas emits 320 IMAD
(the adds, on the FMA pipe) and 640 LOP3 / SHF (the xors and rotates, on the ALU pipe, which issues a
warp instruction every other cycle per scheduler): ~1,280 ALU cycles per warp and scheduler, 4,194,304
blocks = 131,072 warps, ~248 per scheduler: ~0.32M cycles, ~180 us at 1.75 GHz, against ~88 us for the
268 MB written at 3.05 TB/s. The hypothesis: SM% high with the ALU pipe near its peak (FMA pipe ~half),
DRAM ~50%. A lure: each thread's four 16-byte stores are 64 bytes apart across the warp (16 of 32 bytes
per sector per instruction; the thread's next store fills the other half, so no extra DRAM bytes).
Faster means fewer instructions per byte, which ChaCha20 does not allow: nothing big left but the
cipher's own arithmetic.
"""

import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#include <cstdint>

#define ROTL(v, n) (((v) << (n)) | ((v) >> (32 - (n))))
#define QR(a, b, c, d) \
    a += b; d ^= a; d = ROTL(d, 16); c += d; b ^= c; b = ROTL(b, 12); \
    a += b; d ^= a; d = ROTL(d, 8);  c += d; b ^= c; b = ROTL(b, 7);

__global__ void __launch_bounds__(256) chacha20_keystream(const uint32_t* __restrict__ key_nonce, uint32_t counter0,
                                                          uint4* __restrict__ out, int nblocks) {
    int blk = blockIdx.x * blockDim.x + threadIdx.x;   // one 64-byte ChaCha20 block per thread
    if (blk >= nblocks) return;
    uint32_t s[16];
    s[0] = 0x61707865u; s[1] = 0x3320646eu; s[2] = 0x79622d32u; s[3] = 0x6b206574u;   // "expand 32-byte k"
    #pragma unroll
    for (int k = 0; k < 8; ++k) s[4 + k] = key_nonce[k];
    s[12] = counter0 + (uint32_t)blk;
    s[13] = key_nonce[8]; s[14] = key_nonce[9]; s[15] = key_nonce[10];
    uint32_t x[16];
    #pragma unroll
    for (int k = 0; k < 16; ++k) x[k] = s[k];
    #pragma unroll 2
    for (int r = 0; r < 10; ++r) {   // 10 double rounds: columns, then diagonals
        QR(x[0], x[4], x[8], x[12]) QR(x[1], x[5], x[9], x[13]) QR(x[2], x[6], x[10], x[14]) QR(x[3], x[7], x[11], x[15])
        QR(x[0], x[5], x[10], x[15]) QR(x[1], x[6], x[11], x[12]) QR(x[2], x[7], x[8], x[13]) QR(x[3], x[4], x[9], x[14])
    }
    #pragma unroll
    for (int q = 0; q < 4; ++q)
        out[4 * (size_t)blk + q] = make_uint4(x[4 * q] + s[4 * q], x[4 * q + 1] + s[4 * q + 1],
                                              x[4 * q + 2] + s[4 * q + 2], x[4 * q + 3] + s[4 * q + 3]);
}

torch::Tensor keystream(torch::Tensor key_nonce, int64_t counter0, int64_t nblocks) {
    TORCH_CHECK(key_nonce.numel() == 11 && key_nonce.scalar_type() == torch::kInt32);
    auto out = torch::empty({nblocks * 16}, key_nonce.options());   // int32 words, 16 per block
    chacha20_keystream<<<(unsigned int)((nblocks + 255) / 256), 256>>>(
        reinterpret_cast<const uint32_t*>(key_nonce.data_ptr<int>()), (uint32_t)counter0,
        reinterpret_cast<uint4*>(out.data_ptr<int>()), (int)nblocks);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

module = load_inline(
    "kls_chacha20_keystream_uint32_cuda",
    cpp_sources="torch::Tensor keystream(torch::Tensor key_nonce, int64_t counter0, int64_t nblocks);",
    cuda_sources=CUDA_SRC,
    functions=["keystream"],
    extra_cuda_cflags=["-O3", "-lineinfo"],
)

BLOCKS = 1 << 22  # 64-byte keystream blocks: 256 MiB
COUNTER0 = 1
MASK = 0xFFFFFFFF


def make_inputs():
    g = torch.Generator(device="cuda")
    g.manual_seed(0)
    key_nonce = torch.randint(-(2**31), 2**31, (11,), device="cuda", generator=g, dtype=torch.int32)  # key[8], nonce[3]
    return (key_nonce,)


def run(key_nonce):
    return module.keystream(key_nonce, COUNTER0, BLOCKS)


def _rotl(v, n):
    return ((v << n) | (v >> (32 - n))) & MASK


def chacha20_blocks(key_nonce, counter0, nblocks):
    """RFC 8439 block function on int64 tensors (one element per block); returns [nblocks, 16] words in [0, 2^32)."""
    dev = key_nonce.device
    kn = key_nonce.long() & MASK
    const = [0x61707865, 0x3320646E, 0x79622D32, 0x6B206574]
    s = [torch.full((nblocks,), c, dtype=torch.int64, device=dev) for c in const]
    s += [kn[k].expand(nblocks) for k in range(8)]
    s += [(counter0 + torch.arange(nblocks, device=dev)) & MASK]
    s += [kn[8 + k].expand(nblocks) for k in range(3)]
    x = [v.clone() for v in s]

    def qr(a, b, c, d):
        x[a] = (x[a] + x[b]) & MASK
        x[d] = _rotl(x[d] ^ x[a], 16)
        x[c] = (x[c] + x[d]) & MASK
        x[b] = _rotl(x[b] ^ x[c], 12)
        x[a] = (x[a] + x[b]) & MASK
        x[d] = _rotl(x[d] ^ x[a], 8)
        x[c] = (x[c] + x[d]) & MASK
        x[b] = _rotl(x[b] ^ x[c], 7)

    for _ in range(10):
        qr(0, 4, 8, 12), qr(1, 5, 9, 13), qr(2, 6, 10, 14), qr(3, 7, 11, 15)
        qr(0, 5, 10, 15), qr(1, 6, 11, 12), qr(2, 7, 8, 13), qr(3, 4, 9, 14)
    return torch.stack([(x[k] + s[k]) & MASK for k in range(16)], dim=1)


def reference(key_nonce):
    words = chacha20_blocks(key_nonce, COUNTER0, BLOCKS).reshape(-1)
    return torch.where(words >= 2**31, words - 2**32, words).int()
