"""Already good (near_roof): rotary position embedding (RoPE, half-split) at the DRAM roof.

x is [16,384 tokens, 32 heads, 128] bf16 (128 MB); each head vector is rotated pairwise,
(x1, x2) = (x[:64], x[64:]) -> (x1 cos - x2 sin, x2 cos + x1 sin), with the token's cos/sin row
(64 fp32 values each, shared by the 32 heads). One program per token loads the two halves of all 32
heads as two [32, 64] tiles (each row 128 contiguous bytes, so every sector is used), reads the
token's cos/sin row once, and writes the result: 128 MB read + 128 MB written + 8 MB of tables,
~264 MB in all, the minimum this operation needs, at ~3 TB/s ~88 us. Nothing is re-read and
nothing is wasted; the SMs do a few FLOPs per byte. The only way to go faster is to move fewer
bytes (fuse the rotation into the QKV projection's epilogue).
"""
import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
T, H, D = 16384, 32, 128
BASE = 10000.0


@triton.jit
def rope_halfsplit_kernel(x_ptr, cos_ptr, sin_ptr, out_ptr, H: tl.constexpr, D: tl.constexpr):
    t = tl.program_id(0).to(tl.int64)
    HALF: tl.constexpr = D // 2
    offs_h = tl.arange(0, H)
    offs_j = tl.arange(0, HALF)
    row = t * H * D + offs_h[:, None] * D + offs_j[None, :]  # [H, HALF]: first halves of the token's heads
    x1 = tl.load(x_ptr + row).to(tl.float32)
    x2 = tl.load(x_ptr + row + HALF).to(tl.float32)
    c = tl.load(cos_ptr + t * HALF + offs_j)[None, :]
    s = tl.load(sin_ptr + t * HALF + offs_j)[None, :]
    tl.store(out_ptr + row, (x1 * c - x2 * s).to(tl.bfloat16))
    tl.store(out_ptr + row + HALF, (x2 * c + x1 * s).to(tl.bfloat16))


def make_inputs():
    torch.manual_seed(0)
    x = torch.randn(T, H, D, device=DEVICE, dtype=torch.bfloat16)
    inv_freq = 1.0 / BASE ** (torch.arange(0, D, 2, device=DEVICE, dtype=torch.float32) / D)
    angles = torch.arange(T, device=DEVICE, dtype=torch.float32)[:, None] * inv_freq[None, :]  # [T, D/2]
    return x, torch.cos(angles), torch.sin(angles)


def run(x, cos, sin):
    out = torch.empty_like(x)
    rope_halfsplit_kernel[(x.shape[0],)](x, cos, sin, out, H=x.shape[1], D=x.shape[2], num_warps=4)
    return out


def reference(x, cos, sin):
    half = x.shape[2] // 2
    x1, x2 = x[..., :half].float(), x[..., half:].float()
    c, s = cos[:, None, :], sin[:, None, :]
    return torch.cat([x1 * c - x2 * s, x2 * c + x1 * s], dim=-1).to(torch.bfloat16)
