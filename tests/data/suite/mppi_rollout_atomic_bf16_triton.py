"""Planted bottleneck: atomic contention (every MPPI rollout adds its weighted perturbation onto the same control sequence).

Model predictive path integral (MPPI) control update for 4 ground robots planning together on one GPU:
per robot 65,536 sampled rollouts over a 32-step horizon with 2 controls (steering rate, acceleration);
the control perturbations are stored bf16 [robot, step, control, rollout] (33.5 MB) and the rollout
costs fp32 [robot, rollout]. The update is u <- u + sum_k w_k eps_k / sum_k w_k with
w_k = exp(-(S_k - min S) / lambda). The kernel gives each program 256 rollouts of one robot (4 warps,
1,024 programs) and, for each of the 64 (step, control) entries, adds w_k eps_k of every rollout with
tl.atomic_add onto the one fp32 address of that entry (and w_k onto the robot's normaliser): all 256
lanes of an instruction hit the same address, and all 65,536 rollouts of a robot hit the same 64 floats
(256 bytes, two 128-byte lines per robot). 16.8M atomics serialise on 8 lines (a few L2 slices) while
only 34 MB are read.
The hypothesis: atomic_contention: the L2 atomic units of a few slices saturated while DRAM ~1-3% and
SM% ~1%, long-scoreboard / membar stalls, ~0.5-3 ms vs ~11 us for the bytes. The fix: reduce in the
program first (tl.sum(w * eps) per entry: 65 atomics per program instead of 16,640), or a two-stage
reduction without atomics.
"""

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
ROBOTS = 4
ROLLOUTS = 65536
HORIZON = 32
CONTROLS = 2
BLOCK = 256
LAMBDA = 2.0
TOLERANCE = 1e-4  # fp32 atomics in arbitrary order over 65,536 terms per entry


@triton.jit
def mppi_update_kernel(eps_ptr, cost_ptr, smin_ptr, num_ptr, den_ptr, rollouts, inv_lambda,
                       HORIZON: tl.constexpr, CONTROLS: tl.constexpr, BLOCK: tl.constexpr):
    robot = tl.program_id(1)
    k = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = k < rollouts
    cost = tl.load(cost_ptr + robot * rollouts + k, mask=m, other=0.0)
    w = tl.exp((tl.load(smin_ptr + robot) - cost) * inv_lambda)
    w = tl.where(m, w, 0.0)
    zero = tl.zeros([BLOCK], dtype=tl.int32)
    tl.atomic_add(den_ptr + robot + zero, w, mask=m)
    for h in range(HORIZON):
        for d in tl.static_range(CONTROLS):
            entry = (robot * HORIZON + h) * CONTROLS + d
            e = tl.load(eps_ptr + entry.to(tl.int64) * rollouts + k, mask=m, other=0.0).to(tl.float32)
            tl.atomic_add(num_ptr + entry + zero, w * e, mask=m)


def make_inputs():
    g = torch.Generator(device=DEVICE)
    g.manual_seed(0)
    sigma = torch.tensor([0.3, 0.8], device=DEVICE)                                  # rad/s, m/s^2
    eps = torch.randn(ROBOTS, HORIZON, CONTROLS, ROLLOUTS, device=DEVICE, generator=g) * sigma[None, None, :, None]
    # rollout cost: tracking + control effort, correlated with the perturbation (so the update is not zero)
    effort = (eps ** 2).sum(dim=(1, 2))
    bias = torch.randn(ROBOTS, HORIZON, CONTROLS, 1, device=DEVICE, generator=g)
    tracking = 40.0 - 0.5 * (eps * bias).sum(dim=(1, 2)) + 3.0 * torch.randn(ROBOTS, ROLLOUTS, device=DEVICE, generator=g)
    cost = (tracking + 0.5 * effort).contiguous()
    u_nom = 0.2 * torch.randn(ROBOTS, HORIZON, CONTROLS, device=DEVICE, generator=g)
    return eps.to(torch.bfloat16).contiguous(), cost, u_nom.contiguous()


def run(eps, cost, u_nom):
    robots, horizon, controls, rollouts = eps.shape
    smin = cost.amin(dim=1).contiguous()
    num = torch.zeros(robots, horizon, controls, device=eps.device, dtype=torch.float32)
    den = torch.zeros(robots, device=eps.device, dtype=torch.float32)
    mppi_update_kernel[(triton.cdiv(rollouts, BLOCK), robots)](eps, cost, smin, num, den, rollouts, 1.0 / LAMBDA,
                                                               HORIZON=horizon, CONTROLS=controls, BLOCK=BLOCK,
                                                               num_warps=4)
    return u_nom + num / den[:, None, None]


def reference(eps, cost, u_nom):
    c = cost.double()
    w = torch.exp((c.amin(dim=1, keepdim=True) - c) / LAMBDA)                               # [robot, rollout]
    num = (eps.double() * w[:, None, None, :]).sum(-1)
    return (u_nom.double() + num / w.sum(1)[:, None, None]).float()
