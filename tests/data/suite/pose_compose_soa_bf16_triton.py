"""Already good (near_roof), a near miss for compute bound: batched SE(3) pose composition in bf16.

Composes 16,777,216 pairs of rigid-body poses (world-from-base times base-from-tool, as a robot fleet's
tool-frame update does), each pose a unit quaternion (w, x, y, z) and a translation (x, y, z), stored
structure-of-arrays [7, N] in bf16: q_C = q_A * q_B (Hamilton product, 16 multiply-adds) and
t_C = R(q_A) t_B + t_A (vector rotation by the quaternion: two cross products, ~18 more), all in fp32.
That reads like arithmetic-heavy robotics code (~60 instructions per pose), but the bytes are
2 x 14 B in + 14 B out = 42 B per pose, 705 MB, ~231 us at 3.05 TB/s, against ~1G thread
instructions (~35 us of issue); every load and store is contiguous (BLOCK = 1,024, 8 warps: 4 bf16 per
thread per field, 8-byte accesses) and every byte is moved once. The hypothesis: DRAM >= 80% of peak
with ~1.0x the needed bytes, SM% well under 50%: nothing to fix.
"""

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
N = 1 << 24
BLOCK = 1024


@triton.jit
def pose_compose_kernel(a_ptr, b_ptr, c_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    aw = tl.load(a_ptr + 0 * n + offs, mask=mask, other=0.0).to(tl.float32)
    ax = tl.load(a_ptr + 1 * n + offs, mask=mask, other=0.0).to(tl.float32)
    ay = tl.load(a_ptr + 2 * n + offs, mask=mask, other=0.0).to(tl.float32)
    az = tl.load(a_ptr + 3 * n + offs, mask=mask, other=0.0).to(tl.float32)
    atx = tl.load(a_ptr + 4 * n + offs, mask=mask, other=0.0).to(tl.float32)
    aty = tl.load(a_ptr + 5 * n + offs, mask=mask, other=0.0).to(tl.float32)
    atz = tl.load(a_ptr + 6 * n + offs, mask=mask, other=0.0).to(tl.float32)
    bw = tl.load(b_ptr + 0 * n + offs, mask=mask, other=0.0).to(tl.float32)
    bx = tl.load(b_ptr + 1 * n + offs, mask=mask, other=0.0).to(tl.float32)
    by = tl.load(b_ptr + 2 * n + offs, mask=mask, other=0.0).to(tl.float32)
    bz = tl.load(b_ptr + 3 * n + offs, mask=mask, other=0.0).to(tl.float32)
    btx = tl.load(b_ptr + 4 * n + offs, mask=mask, other=0.0).to(tl.float32)
    bty = tl.load(b_ptr + 5 * n + offs, mask=mask, other=0.0).to(tl.float32)
    btz = tl.load(b_ptr + 6 * n + offs, mask=mask, other=0.0).to(tl.float32)
    # Hamilton product q_A * q_B
    cw = aw * bw - ax * bx - ay * by - az * bz
    cx = aw * bx + ax * bw + ay * bz - az * by
    cy = aw * by - ax * bz + ay * bw + az * bx
    cz = aw * bz + ax * by - ay * bx + az * bw
    # rotate t_B by q_A: t' = t + 2w (u x t) + 2 u x (u x t), u = (x, y, z)
    ux = ay * btz - az * bty
    uy = az * btx - ax * btz
    uz = ax * bty - ay * btx
    vx = ay * uz - az * uy
    vy = az * ux - ax * uz
    vz = ax * uy - ay * ux
    tx = btx + 2.0 * (aw * ux + vx) + atx
    ty = bty + 2.0 * (aw * uy + vy) + aty
    tz = btz + 2.0 * (aw * uz + vz) + atz
    tl.store(c_ptr + 0 * n + offs, cw.to(tl.bfloat16), mask=mask)
    tl.store(c_ptr + 1 * n + offs, cx.to(tl.bfloat16), mask=mask)
    tl.store(c_ptr + 2 * n + offs, cy.to(tl.bfloat16), mask=mask)
    tl.store(c_ptr + 3 * n + offs, cz.to(tl.bfloat16), mask=mask)
    tl.store(c_ptr + 4 * n + offs, tx.to(tl.bfloat16), mask=mask)
    tl.store(c_ptr + 5 * n + offs, ty.to(tl.bfloat16), mask=mask)
    tl.store(c_ptr + 6 * n + offs, tz.to(tl.bfloat16), mask=mask)


def _random_poses(g):
    q = torch.randn(4, N, device=DEVICE, generator=g)
    q = q / q.norm(dim=0, keepdim=True)
    t = torch.rand(3, N, device=DEVICE, generator=g) * 2.0 - 1.0
    return torch.cat([q, t]).to(torch.bfloat16).contiguous()


def make_inputs():
    g = torch.Generator(device=DEVICE)
    g.manual_seed(0)
    return _random_poses(g), _random_poses(g)


def run(a, b):
    c = torch.empty_like(a)
    n = a.shape[1]
    pose_compose_kernel[(triton.cdiv(n, BLOCK),)](a, b, c, n, BLOCK=BLOCK, num_warps=8)
    return c


def reference(a, b):
    aw, ax, ay, az, atx, aty, atz = a.float()
    bw, bx, by, bz, btx, bty, btz = b.float()
    q = torch.stack([aw * bw - ax * bx - ay * by - az * bz, aw * bx + ax * bw + ay * bz - az * by,
                     aw * by - ax * bz + ay * bw + az * bx, aw * bz + ax * by - ay * bx + az * bw])
    u = torch.stack([ax, ay, az])
    tb = torch.stack([btx, bty, btz])
    ut = torch.linalg.cross(u, tb, dim=0)
    uut = torch.linalg.cross(u, ut, dim=0)
    t = tb + 2.0 * (aw * ut + uut) + torch.stack([atx, aty, atz])
    return torch.cat([q, t]).to(torch.bfloat16)
