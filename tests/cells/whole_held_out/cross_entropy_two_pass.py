"""Held out. Cross-entropy of logits as two kernels: each row's log-sum-exp, then each row's loss.

The logits are read by both kernels."""

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
SHAPES = [(8192, 8192)] if DEVICE == "cuda" else [(8, 64)]


@triton.jit
def lse_kernel(logits_ptr, lse_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(logits_ptr + row * n_cols + cols, mask=cols < n_cols, other=-float("inf"))
    m = tl.max(x, axis=0)
    tl.store(lse_ptr + row, m + tl.log(tl.sum(tl.exp(x - m), axis=0)))


@triton.jit
def loss_kernel(logits_ptr, lse_ptr, target_ptr, loss_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(logits_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)
    target = tl.load(target_ptr + row)
    picked = tl.sum(tl.where(cols == target, x, 0.0), axis=0)
    tl.store(loss_ptr + row, tl.load(lse_ptr + row) - picked)


def make_inputs(rows=8192, cols=8192):
    return torch.randn(rows, cols, device=DEVICE), torch.randint(0, cols, (rows,), device=DEVICE)


def run(logits, target):
    rows, cols = logits.shape
    block = triton.next_power_of_2(cols)
    lse = torch.empty(rows, device=logits.device)
    loss = torch.empty(rows, device=logits.device)
    lse_kernel[(rows,)](logits, lse, cols, BLOCK=block, num_warps=8)
    loss_kernel[(rows,)](logits, lse, target, loss, cols, BLOCK=block, num_warps=8)
    return loss


def torch_run(logits, target):
    return torch.nn.functional.cross_entropy(logits, target, reduction="none")
