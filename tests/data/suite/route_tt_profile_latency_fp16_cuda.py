"""Planted bottleneck: latency bound (a chain of dependent, time-bucketed travel-time gathers per departure).

Time-dependent route travel times for a traffic-management dashboard (the evaluation step of dynamic
traffic assignment): a national road network of 1,048,576 links with a travel-time profile of 96
quarter-hour buckets per link (fp16 seconds, [1048576, 96], 201 MB: larger than L2), and 16,384 routes
of 192 links each (int32, 12.6 MB). For every route, 256 departures 30 s apart (06:00-08:08) are
propagated link by link: the bucket of link k depends on the arrival time at link k, which depends on
every earlier gather, so each thread is one chain of 192 dependent loads (the route's link ids are
warp-uniform and independent of time). One block per route (256 threads = departures), 16,384 blocks;
the 32 lanes of a warp (16 minutes of departures) mostly hit the same one or two 32-B sectors, so
bandwidth is small (DRAM ~200-400 MB touched), but every hop waits a DRAM / L2 round trip.
The hypothesis: latency_bound: long-scoreboard stalls dominate (hundreds of cycles per issue), issue
~0.2-0.4 per cycle, SM ~20-35%, MEM/DRAM ~10-30%, full theoretical occupancy, ~0.8-2 ms. The fix:
more independent work per thread (several routes or departures interleaved per thread so several
chains are in flight), or a link-time table laid out/cached so hops hit L1.
"""

import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#include <cuda_fp16.h>

#define NB 96   // quarter-hour buckets per day

__global__ void route_tt_profile(const int* __restrict__ route_links, const __half* __restrict__ link_tt,
                                 float* __restrict__ travel, int hops, float t_first, float headway,
                                 float inv_bucket) {
    int r = blockIdx.x;
    int d = threadIdx.x;
    const int* links = route_links + (size_t)r * hops;
    float t0 = t_first + (float)d * headway;
    float t = t0;
    for (int k = 0; k < hops; ++k) {
        int link = links[k];
        int b = (int)(t * inv_bucket) % NB;
        t += __half2float(link_tt[(size_t)link * NB + b]);
    }
    travel[(size_t)r * blockDim.x + d] = t - t0;
}

torch::Tensor route_profiles(torch::Tensor route_links, torch::Tensor link_tt, int64_t departures,
                             double t_first, double headway, double bucket_s) {
    TORCH_CHECK(route_links.is_cuda() && route_links.scalar_type() == torch::kInt && route_links.is_contiguous());
    TORCH_CHECK(link_tt.scalar_type() == torch::kHalf && link_tt.dim() == 2 && link_tt.size(1) == NB && link_tt.is_contiguous());
    TORCH_CHECK(departures > 0 && departures <= 1024);
    int routes = route_links.size(0), hops = route_links.size(1);
    auto out = torch::empty({routes, departures}, route_links.options().dtype(torch::kFloat));
    route_tt_profile<<<routes, (int)departures>>>(route_links.data_ptr<int>(),
                                                  reinterpret_cast<const __half*>(link_tt.data_ptr<at::Half>()),
                                                  out.data_ptr<float>(), hops, (float)t_first, (float)headway,
                                                  (float)(1.0 / bucket_s));
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

module = load_inline(
    "kls_route_tt_profile_latency_fp16_cuda",
    cpp_sources="torch::Tensor route_profiles(torch::Tensor route_links, torch::Tensor link_tt, int64_t departures, "
                "double t_first, double headway, double bucket_s);",
    cuda_sources=CUDA_SRC,
    functions=["route_profiles"],
    extra_cuda_cflags=["-O3", "-lineinfo"],
)

LINKS = 1 << 20
BUCKETS = 96
ROUTES = 16384
HOPS = 192
DEPARTURES = 256
T_FIRST = 6 * 3600.0      # s
HEADWAY = 30.0            # s
BUCKET_S = 900.0          # s
TOLERANCE = 1e-5


def make_inputs():
    g = torch.Generator(device="cuda")
    g.manual_seed(0)
    free = 8.0 + 40.0 * torch.rand(LINKS, 1, device="cuda", generator=g)        # free-flow s
    congest = torch.rand(LINKS, 1, device="cuda", generator=g) ** 2
    b = torch.arange(BUCKETS, device="cuda", dtype=torch.float32)[None]
    peak = torch.exp(-((b - 32.0) / 4.0) ** 2) + 0.8 * torch.exp(-((b - 70.0) / 5.0) ** 2)    # 08:00 and 17:30
    tt = (free * (1.0 + 2.0 * congest * peak)).to(torch.float16)
    routes = torch.randint(0, LINKS, (ROUTES, HOPS), device="cuda", generator=g, dtype=torch.int32)
    return routes.contiguous(), tt.contiguous()


def run(routes, tt):
    return module.route_profiles(routes, tt, DEPARTURES, T_FIRST, HEADWAY, BUCKET_S)


def reference(routes, tt):
    inv = torch.tensor(1.0 / BUCKET_S, dtype=torch.float32, device=routes.device)
    t0 = T_FIRST + HEADWAY * torch.arange(DEPARTURES, device=routes.device, dtype=torch.float32)
    t = t0[None].repeat(routes.shape[0], 1)
    flat = tt.float().reshape(-1)
    for k in range(routes.shape[1]):
        b = torch.remainder(torch.floor(t * inv).long(), BUCKETS)
        t = t + flat[routes[:, k].long()[:, None] * BUCKETS + b]
    return t - t0[None]
