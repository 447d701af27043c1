# Lesson 10, attempt: one program per token (cos and sin reused by all heads), still even/odd loads 8 bytes apart.
import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"  # no GPU: Triton's CPU interpreter


@triton.jit
def rope_kernel(x_ptr, cos_ptr, sin_ptr, out_ptr, H, BLOCK_H: tl.constexpr, D: tl.constexpr):
    s = tl.program_id(0)  # token
    h = tl.arange(0, BLOCK_H)[:, None]
    i = tl.arange(0, D // 2)[None, :]
    mask = h < H
    base = s * H * D + h * D
    x0 = tl.load(x_ptr + base + 2 * i, mask=mask)
    x1 = tl.load(x_ptr + base + 2 * i + 1, mask=mask)
    c = tl.load(cos_ptr + s * (D // 2) + i)
    sn = tl.load(sin_ptr + s * (D // 2) + i)
    tl.store(out_ptr + base + 2 * i, x0 * c - x1 * sn, mask=mask)
    tl.store(out_ptr + base + 2 * i + 1, x0 * sn + x1 * c, mask=mask)


S, H, D = (8192, 32, 128) if DEVICE == "cuda" else (9, 4, 32)  # tokens, heads, head dimension
SHAPES = [(S, H), (1000, 7) if DEVICE == "cuda" else (5, 3)]  # the head dimension D is the model's


def make_inputs(s=S, h=H):
    x = torch.randn(s, h, D, device=DEVICE)
    angle = torch.rand(s, D // 2, device=DEVICE) * 6.2832
    return x, torch.cos(angle), torch.sin(angle)


def run(x, cos, sin):
    s, h, d = x.shape
    out = torch.empty_like(x)
    rope_kernel[(s,)](x, cos, sin, out, h, BLOCK_H=triton.next_power_of_2(h), D=d, num_warps=8)
    return out
