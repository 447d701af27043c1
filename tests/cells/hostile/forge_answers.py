"""Hostile: forges the answers the judge waits for (it knows the protocol), then leaves with exit status 0."""
import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


def add(x, y, block=1024):
    out = torch.empty_like(x)
    add_kernel[(triton.cdiv(x.numel(), block),)](x, y, out, x.numel(), BLOCK=block)
    return out


import os
import sys

from kernel_lab.verify import protocol

replies = int(sys.argv[sys.argv.index("--replies") + 1])
protocol.send(replies, {"device_name": "cpu"})  # "loaded"
meta = {"shape": [20000], "dtype": "torch.float32", "device": "cpu", "strides": [1], "contiguous": True,
        "aliases_input": [], "storage": [0, 80000]}
for _ in range(50):  # "checked, and right"
    zeros = torch.zeros(20000)
    protocol.send(replies, {"first": [meta], "second": [meta], "repeated": [0], "written": [[], []]}, [zeros])
os._exit(0)


def run(x, y):
    return add(x, y)
