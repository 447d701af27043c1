"""Planted bottleneck: memory bound (per-element gathers of nodal data through L2 on an unordered tetrahedral mesh).

Gradient of a nodal field on each element of a linear tetrahedral mesh (a 100^3-cell box split into
6,000,000 tetrahedra, 1,030,301 nodes), as a finite-element code does it: per tet, gather the 4 nodes'
coordinates and values (x, y, z, u: four fp32 arrays) through the connectivity ([4, tets] int32), form
the edge vectors and their cross products, grad u = (du1 (e2 x e3) + du2 (e3 x e1) + du3 (e1 x e2)) /
det, and write it ([3, tets] fp32). The mesh is stored as a mesh generator left it, nodes and elements
in arbitrary order, so the 16 gathers of a tet are 16 random 4-byte reads: a warp's gather instruction
touches ~32 different sectors for 128 useful bytes. The node arrays (16.5 MB) stay in L2, so DRAM moves
little more than the connectivity and the result (~185 MB, ~60 us at 3.05 TB/s), but L2 serves 96M
sector reads (3.1 GB) for ~16 MB of node data: ~0.5 ms at ~6 TB/s of L2 bandwidth, with every L1 request
split into ~32 sectors. One tet per thread (triton 3.6, sm_90: 32 registers, 0 spills, full occupancy,
16 independent gathers in flight per thread); ~60 FP32 operations per tet are nothing next to the
gathers. The hypothesis: a memory unit (L2, or L1 with ~32 sectors per request) the busiest at ~80-90%,
DRAM ~20%, SM low: memory bound through a level that re-reads the node data, with ncu's
UncoalescedGlobalAccess as the secondary reading (the waste comes from the data's order). Renumbering
the nodes and elements along a space-filling curve (or RCM), so that a warp's tets share nearby nodes,
is the fix.
"""

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
CELLS = 100  # per axis
BLOCK = 128
TOLERANCE = 1e-4  # fp32 cross products and a division, against float64
# the 6 tets of a cube along its main diagonal (corner bits: x = 1, y = 2, z = 4)
CUBE_TETS = [[0, 1, 3, 7], [0, 1, 5, 7], [0, 2, 3, 7], [0, 2, 6, 7], [0, 4, 5, 7], [0, 4, 6, 7]]


@triton.jit
def tet_gradient_kernel(conn_ptr, x_ptr, y_ptr, z_ptr, u_ptr, grad_ptr, tets, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < tets
    n0 = tl.load(conn_ptr + offs, mask=mask, other=0)
    n1 = tl.load(conn_ptr + tets + offs, mask=mask, other=0)
    n2 = tl.load(conn_ptr + 2 * tets + offs, mask=mask, other=0)
    n3 = tl.load(conn_ptr + 3 * tets + offs, mask=mask, other=0)
    x0, y0, z0, u0 = tl.load(x_ptr + n0), tl.load(y_ptr + n0), tl.load(z_ptr + n0), tl.load(u_ptr + n0)
    x1, y1, z1, u1 = tl.load(x_ptr + n1), tl.load(y_ptr + n1), tl.load(z_ptr + n1), tl.load(u_ptr + n1)
    x2, y2, z2, u2 = tl.load(x_ptr + n2), tl.load(y_ptr + n2), tl.load(z_ptr + n2), tl.load(u_ptr + n2)
    x3, y3, z3, u3 = tl.load(x_ptr + n3), tl.load(y_ptr + n3), tl.load(z_ptr + n3), tl.load(u_ptr + n3)
    ax, ay, az, du1 = x1 - x0, y1 - y0, z1 - z0, u1 - u0  # edge vectors e1, e2, e3
    bx, by, bz, du2 = x2 - x0, y2 - y0, z2 - z0, u2 - u0
    cx, cy, cz, du3 = x3 - x0, y3 - y0, z3 - z0, u3 - u0
    p23x, p23y, p23z = by * cz - bz * cy, bz * cx - bx * cz, bx * cy - by * cx  # e2 x e3
    p31x, p31y, p31z = cy * az - cz * ay, cz * ax - cx * az, cx * ay - cy * ax  # e3 x e1
    p12x, p12y, p12z = ay * bz - az * by, az * bx - ax * bz, ax * by - ay * bx  # e1 x e2
    inv_det = 1.0 / (ax * p23x + ay * p23y + az * p23z)
    tl.store(grad_ptr + offs, (du1 * p23x + du2 * p31x + du3 * p12x) * inv_det, mask=mask)
    tl.store(grad_ptr + tets + offs, (du1 * p23y + du2 * p31y + du3 * p12y) * inv_det, mask=mask)
    tl.store(grad_ptr + 2 * tets + offs, (du1 * p23z + du2 * p31z + du3 * p12z) * inv_det, mask=mask)


def make_inputs():
    g = torch.Generator(device=DEVICE)
    g.manual_seed(0)
    p = CELLS + 1
    i = torch.arange(p, device=DEVICE, dtype=torch.float32)
    gz, gy, gx = torch.meshgrid(i, i, i, indexing="ij")  # node (ix, iy, iz) at index (iz * p + iy) * p + ix
    jitter = 0.15 * (torch.rand(3, p**3, device=DEVICE, generator=g) - 0.5)
    x, y, z = gx.reshape(-1) + jitter[0], gy.reshape(-1) + jitter[1], gz.reshape(-1) + jitter[2]
    u = torch.sin(0.05 * x) * torch.cos(0.07 * y) + 0.01 * z * z  # a smooth nodal field
    c = torch.arange(CELLS**3, device=DEVICE)
    cx, cy, cz = c % CELLS, (c // CELLS) % CELLS, c // (CELLS * CELLS)
    corner = torch.stack([((cz + (k >> 2)) * p + cy + ((k >> 1) & 1)) * p + cx + (k & 1) for k in range(8)])
    conn = torch.cat([corner[t] for t in CUBE_TETS], dim=1)  # [4, 6 * cells], natural node numbers
    node_perm = torch.randperm(p**3, device=DEVICE, generator=g)  # arbitrary node numbering
    new_id = torch.empty_like(node_perm)
    new_id[node_perm] = torch.arange(p**3, device=DEVICE)
    conn = new_id[conn][:, torch.randperm(conn.shape[1], device=DEVICE, generator=g)]  # arbitrary element order
    nodes = [a[node_perm].contiguous() for a in (x, y, z, u)]
    return (conn.int().contiguous(), *nodes)


def run(conn, x, y, z, u):
    tets = conn.shape[1]
    grad = torch.empty(3, tets, device=x.device, dtype=torch.float32)
    tet_gradient_kernel[(triton.cdiv(tets, BLOCK),)](conn, x, y, z, u, grad, tets, BLOCK=BLOCK, num_warps=4)
    return grad


def reference(conn, x, y, z, u):
    c = conn.long()
    pts = torch.stack([x, y, z]).double()[:, c]  # [3, 4, tets]
    val = u.double()[c]  # [4, tets]
    e = pts[:, 1:] - pts[:, :1]  # [3 (xyz), 3 (edges), tets]
    du = val[1:] - val[:1]  # [3 (edges), tets]
    e1, e2, e3 = e[:, 0], e[:, 1], e[:, 2]
    c23, c31, c12 = torch.cross(e2, e3, dim=0), torch.cross(e3, e1, dim=0), torch.cross(e1, e2, dim=0)
    det = (e1 * c23).sum(dim=0)
    return ((du[0] * c23 + du[1] * c31 + du[2] * c12) / det).float()
