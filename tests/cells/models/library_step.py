"""A model step that calls two library kernels: Liger-Kernel's RMSNorm and Unsloth's SwiGLU (vendored in
``minilib``), around two matrix products in PyTorch. The kernels are the libraries', launched as they launch them."""

import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from minilib import rms_norm, swiglu  # noqa: E402

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
DTYPE = torch.bfloat16 if DEVICE == "cuda" else torch.float32
SHAPES = [(8192, 2048)] if DEVICE == "cuda" else [(16, 64)]


def make_inputs(tokens=8192, hidden=2048):
    x = torch.randn(tokens, hidden, device=DEVICE, dtype=DTYPE)
    w = torch.randn(hidden, device=DEVICE, dtype=DTYPE)
    up = torch.randn(hidden, 2 * 4 * hidden, device=DEVICE, dtype=DTYPE) / hidden**0.5
    down = torch.randn(4 * hidden, hidden, device=DEVICE, dtype=DTYPE) / (4 * hidden) ** 0.5
    return x, w, up, down


def run(x, w, up, down):
    h = rms_norm(x, w, 1e-6)
    gate, value = (h @ up).chunk(2, dim=-1)  # the library's SwiGLU takes (batch, seq, hidden)
    return x + swiglu(gate.contiguous()[None], value.contiguous()[None])[0] @ down


def torch_run(x, w, up, down):
    h = (x.float() * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-6) * w.float()).to(x.dtype)
    gate, value = (h @ up).chunk(2, dim=-1)
    return x + (torch.nn.functional.silu(gate.float()) * value.float()).to(x.dtype) @ down
