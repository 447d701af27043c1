"""A model step compiled with torch.compile: RMSNorm, a linear layer, GELU, a second linear layer and a residual
add, in bf16. Inductor writes the elementwise and reduction kernels (triton_poi_fused_..., triton_red_fused_...);
the matrix products go to cuBLAS."""

import torch

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
DTYPE = torch.bfloat16 if DEVICE == "cuda" else torch.float32
SHAPES = [(8192, 2048)] if DEVICE == "cuda" else [(16, 64)]


def block(x, g, w1, w2):
    h = x * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-6).to(x.dtype) * g
    return x + torch.nn.functional.gelu(h @ w1, approximate="tanh") @ w2


step = torch.compile(block)


def make_inputs(tokens=8192, hidden=2048):
    x = torch.randn(tokens, hidden, device=DEVICE, dtype=DTYPE)
    g = torch.randn(hidden, device=DEVICE, dtype=DTYPE)
    w1 = torch.randn(hidden, 4 * hidden, device=DEVICE, dtype=DTYPE) / hidden**0.5
    w2 = torch.randn(4 * hidden, hidden, device=DEVICE, dtype=DTYPE) / (4 * hidden) ** 0.5
    return x, g, w1, w2


def run(x, g, w1, w2):
    return step(x, g, w1, w2)


def torch_run(x, g, w1, w2):
    return block(x, g, w1, w2)
