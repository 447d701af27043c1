# Lesson 10, naive: rotary position embedding (RoPE, LLaMA's interleaved pairs), one program per (token, head).
import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"  # no GPU: Triton's CPU interpreter


@triton.jit
def rope_kernel(x_ptr, cos_ptr, sin_ptr, out_ptr, H, D: tl.constexpr):
    pid = tl.program_id(0)  # one (token, head) vector of D values
    s = pid // H  # token
    i = tl.arange(0, D // 2)  # pair (x[2i], x[2i + 1]) is rotated by angle i of token s
    x0 = tl.load(x_ptr + pid * D + 2 * i)
    x1 = tl.load(x_ptr + pid * D + 2 * i + 1)
    c = tl.load(cos_ptr + s * (D // 2) + i)
    sn = tl.load(sin_ptr + s * (D // 2) + i)
    tl.store(out_ptr + pid * D + 2 * i, x0 * c - x1 * sn)
    tl.store(out_ptr + pid * D + 2 * i + 1, x0 * sn + x1 * c)


S, H, D = (8192, 32, 128) if DEVICE == "cuda" else (9, 4, 32)  # tokens, heads, head dimension
SHAPES = [(S, H), (1000, 7) if DEVICE == "cuda" else (5, 3)]  # the head dimension D is the model's


def make_inputs(s=S, h=H):
    x = torch.randn(s, h, D, device=DEVICE)
    angle = torch.rand(s, D // 2, device=DEVICE) * 6.2832
    return x, torch.cos(angle), torch.sin(angle)


def run(x, cos, sin):
    s, h, d = x.shape
    out = torch.empty_like(x)
    rope_kernel[(s * h,)](x, cos, sin, out, h, D=d)
    return out
