# Lesson 10, wrong: the rotation's sign is flipped (rotates by -angle).
import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"  # no GPU: Triton's CPU interpreter


@triton.jit
def rope_kernel(x_ptr, cos_ptr, sin_ptr, out_ptr, H, BLOCK_H: tl.constexpr, D: tl.constexpr):
    s = tl.program_id(0)  # token
    h = tl.arange(0, BLOCK_H)
    d = tl.arange(0, D)
    mask = (h < H)[:, None]
    offs = s * H * D + h[:, None] * D + d[None, :]
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)  # BLOCK_H x D, contiguous
    x0, x1 = tl.split(tl.reshape(x, (BLOCK_H, D // 2, 2)))  # even and odd elements, in registers
    i = tl.arange(0, D // 2)
    c = tl.load(cos_ptr + s * (D // 2) + i)[None, :]  # once per token, for every head
    sn = tl.load(sin_ptr + s * (D // 2) + i)[None, :]
    y = tl.reshape(tl.join(x0 * c + x1 * sn, x1 * c - x0 * sn), (BLOCK_H, D))
    tl.store(out_ptr + offs, y, mask=mask)


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
