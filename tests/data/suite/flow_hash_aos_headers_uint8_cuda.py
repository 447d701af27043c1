"""Planted bottleneck: uncoalesced global access (one thread per 128-byte packet record, byte loads).

Flow classification of captured traffic (an RSS-style flow key for a GPU packet-processing pipeline):
4,194,304 packets stored as pcap-style 128-byte header snapshots (uint8, [packets, 128], 537 MB:
Ethernet + IPv4 + TCP/UDP, IPv4 options vary the IHL from 5 to 8 words), out a 32-bit murmur3-style hash
of the 5-tuple per packet (int32, 16.8 MB). One thread per packet parses its record the way header code
does, byte by byte in network order: IHL (byte 14), protocol (23), source and destination address
(26-33), and the two ports at 14 + 4 IHL (for TCP/UDP only): 13 one-byte loads per thread, and the 32
lanes of a warp read 32 records 128 B apart, so every load instruction touches 32 sectors for 32 useful
bytes (1 B used per 32-B sector per request). The records' first two sectors (64 of 128 B) are all
DRAM has to move (268 MB, ~90 us at the roof); the bytes of a sector come from L1 after the first load.
16,384 blocks of 256. The hypothesis: uncoalesced_global: ~32 sectors per request (ncu's uncoalesced
global access rule), L1/LSU wavefronts the busiest unit (L1 ~70-90%), DRAM ~30-50%, ~0.2-0.5 ms.
The fix: a warp reads a record's 64 bytes cooperatively (or records transposed to [field, packet]).
"""

import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>

__device__ __forceinline__ unsigned rotl32(unsigned x, int r) { return (x << r) | (x >> (32 - r)); }
__device__ __forceinline__ unsigned mix(unsigned h, unsigned k) {
    k *= 0xcc9e2d51u; k = rotl32(k, 15); k *= 0x1b873593u;
    h ^= k; h = rotl32(h, 13); return h * 5u + 0xe6546b64u;
}

__global__ void __launch_bounds__(256) flow_hash_aos(const unsigned char* __restrict__ pkt, int* __restrict__ out,
                                                     long n, int snap) {
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const unsigned char* p = pkt + i * snap;
    unsigned ihl = p[14] & 0xfu;
    unsigned proto = p[23];
    unsigned src = ((unsigned)p[26] << 24) | ((unsigned)p[27] << 16) | ((unsigned)p[28] << 8) | p[29];
    unsigned dst = ((unsigned)p[30] << 24) | ((unsigned)p[31] << 16) | ((unsigned)p[32] << 8) | p[33];
    unsigned ports = 0;
    if (proto == 6u || proto == 17u) {
        const unsigned char* l4 = p + 14 + 4 * ihl;
        ports = ((unsigned)l4[0] << 24) | ((unsigned)l4[1] << 16) | ((unsigned)l4[2] << 8) | l4[3];
    }
    unsigned h = 0x9747b28cu;
    h = mix(h, src); h = mix(h, dst); h = mix(h, ports); h = mix(h, proto);
    h ^= 13u;
    h ^= h >> 16; h *= 0x85ebca6bu; h ^= h >> 13; h *= 0xc2b2ae35u; h ^= h >> 16;
    out[i] = (int)h;
}

torch::Tensor flow_hash(torch::Tensor pkt) {
    TORCH_CHECK(pkt.dim() == 2 && pkt.scalar_type() == torch::kUInt8 && pkt.is_contiguous());
    long n = pkt.size(0);
    int snap = pkt.size(1);
    TORCH_CHECK(snap >= 64);
    auto out = torch::empty({n}, pkt.options().dtype(torch::kInt));
    flow_hash_aos<<<(unsigned)((n + 255) / 256), 256>>>(pkt.data_ptr<unsigned char>(), out.data_ptr<int>(), n, snap);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

module = load_inline(
    "kls_flow_hash_aos_headers_uint8_cuda",
    cpp_sources="torch::Tensor flow_hash(torch::Tensor pkt);",
    cuda_sources=CUDA_SRC,
    functions=["flow_hash"],
    extra_cuda_cflags=["-O3", "-lineinfo"],
)

PACKETS = 1 << 22
SNAP = 128
M32 = 0xFFFFFFFF


def make_inputs():
    g = torch.Generator(device="cuda")
    g.manual_seed(0)
    pkt = torch.randint(0, 256, (PACKETS, SNAP), device="cuda", generator=g, dtype=torch.int32)
    pkt[:, 12], pkt[:, 13] = 0x08, 0x00                                              # EtherType IPv4
    ihl = torch.randint(5, 9, (PACKETS,), device="cuda", generator=g)
    ihl = torch.where(torch.rand(PACKETS, device="cuda", generator=g) < 0.85, torch.full_like(ihl, 5), ihl)
    pkt[:, 14] = 0x40 | ihl.int()                                                    # version 4, IHL 5-8
    u = torch.rand(PACKETS, device="cuda", generator=g)
    proto = torch.where(u < 0.7, 6, torch.where(u < 0.95, 17, torch.where(u < 0.98, 1, 47)))
    pkt[:, 23] = proto.int()
    return (pkt.to(torch.uint8).contiguous(),)


def _mul(a, c):  # (a * c) mod 2^32 without overflowing int64
    return (a * (c & 0xFFFF) + (((a * (c >> 16)) & 0xFFFF) << 16)) & M32


def _rotl(x, r):
    return ((x << r) & M32) | (x >> (32 - r))


def _mix(h, k):
    k = _mul(k, 0xCC9E2D51)
    k = _rotl(k, 15)
    k = _mul(k, 0x1B873593)
    h = h ^ k
    h = _rotl(h, 13)
    return (_mul(h, 5) + 0xE6546B64) & M32


def run(pkt):
    return module.flow_hash(pkt)


def reference(pkt):
    p = pkt.long()
    ihl = p[:, 14] & 0xF
    proto = p[:, 23]
    src = (p[:, 26] << 24) | (p[:, 27] << 16) | (p[:, 28] << 8) | p[:, 29]
    dst = (p[:, 30] << 24) | (p[:, 31] << 16) | (p[:, 32] << 8) | p[:, 33]
    off = (14 + 4 * ihl)[:, None] + torch.arange(4, device=pkt.device)[None, :]
    l4 = torch.gather(p, 1, off)
    ports = (l4[:, 0] << 24) | (l4[:, 1] << 16) | (l4[:, 2] << 8) | l4[:, 3]
    ports = torch.where((proto == 6) | (proto == 17), ports, torch.zeros_like(ports))
    h = torch.full_like(src, 0x9747B28C)
    for k in (src, dst, ports, proto):
        h = _mix(h, k)
    h = h ^ 13
    h = h ^ (h >> 16)
    h = _mul(h, 0x85EBCA6B)
    h = h ^ (h >> 13)
    h = _mul(h, 0xC2B2AE35)
    h = h ^ (h >> 16)
    return torch.where(h >= 1 << 31, h - (1 << 32), h).to(torch.int32)
