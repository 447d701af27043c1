"""Planted bottleneck: launch overhead (near miss for small_grid: a 4-program grid that is really launch-bound).

The vertex stage of a software rasterizer for one small mesh (a UI widget / a gizmo): 1,024 vertices
(fp32, [1024, 3] object space) transformed by a 4 x 4 model-view-projection matrix, perspective
divide, viewport mapping to a 1,920 x 1,080 target: screen x, y, depth (fp32 out, [1024, 3]).
4 programs of 256 vertices (2 warps each): 28 KB of traffic and ~30 k FLOP, a couple of microseconds
of which almost all is the launch and the ramp of 4 CTAs. ncu will show a grid of 4 blocks on 132 SMs
(0.03 waves), but a larger grid would not help: there are only 1,024 vertices.
The hypothesis: launch_overhead: duration ~2-4 us, every throughput < 1%, the fix is batching many
meshes per launch (or fusing it into the raster kernel / a CUDA graph), not more programs.
"""

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
VERTS = 1024
WIDTH = 1920
HEIGHT = 1080
BLOCK = 256


@triton.jit
def viewport_kernel(v_ptr, m_ptr, out_ptr, n, width, height, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    msk = i < n
    x = tl.load(v_ptr + i * 3, mask=msk, other=0.0)
    y = tl.load(v_ptr + i * 3 + 1, mask=msk, other=0.0)
    z = tl.load(v_ptr + i * 3 + 2, mask=msk, other=0.0)
    cx = tl.load(m_ptr + 0) * x + tl.load(m_ptr + 1) * y + tl.load(m_ptr + 2) * z + tl.load(m_ptr + 3)
    cy = tl.load(m_ptr + 4) * x + tl.load(m_ptr + 5) * y + tl.load(m_ptr + 6) * z + tl.load(m_ptr + 7)
    cz = tl.load(m_ptr + 8) * x + tl.load(m_ptr + 9) * y + tl.load(m_ptr + 10) * z + tl.load(m_ptr + 11)
    cw = tl.load(m_ptr + 12) * x + tl.load(m_ptr + 13) * y + tl.load(m_ptr + 14) * z + tl.load(m_ptr + 15)
    inv_w = 1.0 / cw
    sx = (cx * inv_w * 0.5 + 0.5) * width
    sy = (0.5 - cy * inv_w * 0.5) * height
    sz = cz * inv_w * 0.5 + 0.5
    tl.store(out_ptr + i * 3, sx, mask=msk)
    tl.store(out_ptr + i * 3 + 1, sy, mask=msk)
    tl.store(out_ptr + i * 3 + 2, sz, mask=msk)


def make_inputs():
    g = torch.Generator(device=DEVICE)
    g.manual_seed(0)
    v = torch.rand(VERTS, 3, device=DEVICE, generator=g) * 2.0 - 1.0
    f, aspect, near, far = 1.0 / 0.6, WIDTH / HEIGHT, 0.1, 100.0                  # 62-degree vertical field of view
    proj = torch.tensor([[f / aspect, 0, 0, 0], [0, f, 0, 0],
                         [0, 0, (far + near) / (near - far), 2 * far * near / (near - far)], [0, 0, -1, 0]],
                        dtype=torch.float64)
    view = torch.eye(4, dtype=torch.float64)
    view[2, 3] = -5.0                                                             # camera 5 units back
    c, s = 0.8, 0.6
    model = torch.tensor([[c, 0, s, 0.3], [0, 1, 0, -0.2], [-s, 0, c, 0], [0, 0, 0, 1]], dtype=torch.float64)
    mvp = (proj @ view @ model).float().to(DEVICE)
    return v.contiguous(), mvp.contiguous()


def run(v, mvp):
    n = v.shape[0]
    out = torch.empty_like(v)
    viewport_kernel[(triton.cdiv(n, BLOCK),)](v, mvp, out, n, WIDTH, HEIGHT, BLOCK=BLOCK, num_warps=2)
    return out


def reference(v, mvp):
    vh = torch.cat([v.double(), torch.ones(v.shape[0], 1, device=v.device, dtype=torch.float64)], dim=1)
    c = vh @ mvp.double().t()
    ndc = c[:, :3] / c[:, 3:4]
    return torch.stack([(ndc[:, 0] * 0.5 + 0.5) * WIDTH, (0.5 - ndc[:, 1] * 0.5) * HEIGHT, ndc[:, 2] * 0.5 + 0.5],
                       dim=1).float()
