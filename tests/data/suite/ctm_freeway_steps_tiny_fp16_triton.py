"""Planted bottleneck: launch overhead (near miss for small_grid: 240 dependent time steps of a 4-program kernel).

Macroscopic freeway traffic simulation with Daganzo's cell transmission model (CTM), the workhorse of
ramp-metering and corridor-management studies: one corridor of 1,024 cells of 0.5 km (512 km of
carriageway, e.g. a ring of urban motorways), densities in veh/km stored in fp16, a triangular
fundamental diagram (free speed 100 km/h, wave speed 20 km/h, jam density 180 veh/km, capacity
2,000 veh/h), an upstream demand and on-ramp inflows. One time step of 5 s = one kernel launch
(every cell needs its neighbours' densities of the previous step, so the launch is the global
barrier): 240 launches in run() (20 simulated minutes), each of 4 programs of 256 cells (2 warps),
~6 KB of traffic and a few kFLOP. Each launch is a couple of microseconds, almost all of it launch
latency and the ramp of 4 CTAs; ncu profiles one of them: a 4-block grid on 132 SMs, but a larger grid
would not help (1,024 cells).
The hypothesis: launch_overhead: kernel ~2-4 us, every throughput < 1%, run() ~240 x 4-6 us ~1-1.5 ms
dominated by launches; the fix is one persistent launch that loops over the steps with a grid-wide
barrier (or one CTA per corridor looping over time in shared memory), or a CUDA graph of the steps.
"""

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
CELLS = 1024
STEPS = 240
BLOCK = 256
DT_H = 5.0 / 3600.0      # time step, h
DX_KM = 0.5               # cell length, km
V_FREE = 100.0            # km/h
W_WAVE = 20.0             # km/h
RHO_JAM = 180.0           # veh/km
Q_MAX = 2000.0            # veh/h
DEMAND = 1800.0           # veh/h upstream


@triton.jit
def ctm_step_kernel(rho_ptr, ramp_ptr, out_ptr, n, dt_dx, v, w, rho_jam, q_max, demand, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    rho = tl.load(rho_ptr + i, mask=m, other=0.0).to(tl.float32)
    up = tl.load(rho_ptr + i - 1, mask=m & (i > 0), other=0.0).to(tl.float32)
    dn = tl.load(rho_ptr + i + 1, mask=m & (i + 1 < n), other=0.0).to(tl.float32)
    ramp = tl.load(ramp_ptr + i, mask=m, other=0.0)
    send_up = tl.minimum(v * up, q_max)
    send = tl.minimum(v * rho, q_max)
    recv = tl.minimum(q_max, w * (rho_jam - rho))
    recv_dn = tl.minimum(q_max, w * (rho_jam - dn))
    f_in = tl.where(i > 0, tl.minimum(send_up, recv), tl.minimum(demand, recv))
    f_out = tl.where(i + 1 < n, tl.minimum(send, recv_dn), send)
    r_in = tl.minimum(ramp, tl.maximum(recv - f_in, 0.0))
    new = rho + dt_dx * (f_in + r_in - f_out)
    tl.store(out_ptr + i, new.to(tl.float16), mask=m)


def make_inputs():
    g = torch.Generator(device=DEVICE)
    g.manual_seed(0)
    x = torch.arange(CELLS, device=DEVICE, dtype=torch.float32)
    rho0 = 20.0 + 15.0 * torch.rand(CELLS, device=DEVICE, generator=g)
    rho0 = rho0 + 120.0 * torch.exp(-((x - 0.6 * CELLS) / 25.0) ** 2)             # a standing queue
    ramp = torch.where(torch.rand(CELLS, device=DEVICE, generator=g) < 0.08,
                       400.0 + 600.0 * torch.rand(CELLS, device=DEVICE, generator=g),
                       torch.zeros(CELLS, device=DEVICE))                         # on-ramp demand, veh/h
    return rho0.to(torch.float16).contiguous(), ramp.float().contiguous()


def run(rho0, ramp):
    n = rho0.numel()
    a, b = rho0.clone(), torch.empty_like(rho0)
    grid = (triton.cdiv(n, BLOCK),)
    for _ in range(STEPS):
        ctm_step_kernel[grid](a, ramp, b, n, DT_H / DX_KM, V_FREE, W_WAVE, RHO_JAM, Q_MAX, DEMAND,
                              BLOCK=BLOCK, num_warps=2)
        a, b = b, a
    return a


def reference(rho0, ramp):
    rho = rho0.clone()
    n = rho.numel()
    z = torch.zeros(1, device=rho.device, dtype=torch.float32)
    for _ in range(STEPS):
        r = rho.float()
        send = torch.clamp(V_FREE * r, max=Q_MAX)
        recv = torch.clamp(W_WAVE * (RHO_JAM - r), max=Q_MAX)
        f_in = torch.cat([torch.minimum(torch.full_like(z, DEMAND), recv[:1]), torch.minimum(send[:-1], recv[1:])])
        f_out = torch.cat([torch.minimum(send[:-1], recv[1:]), send[-1:]])
        r_in = torch.minimum(ramp, torch.clamp(recv - f_in, min=0.0))
        rho = (r + (DT_H / DX_KM) * (f_in + r_in - f_out)).to(torch.float16)
    assert rho.numel() == n
    return rho
