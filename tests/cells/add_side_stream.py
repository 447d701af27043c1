"""GPU only. Cheat: the real (slow) work runs on a side stream that CUDA events on the default stream do not see."""
import torch
import triton
import triton.language as tl

SIDE = torch.cuda.Stream()


@triton.jit
def slow_add_kernel(x_ptr, y_ptr, out_ptr, scratch_ptr, n, REPEAT: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask)
    t = v
    for _ in range(REPEAT):  # a long dependent chain, stored so the compiler keeps it
        t = t * 0.999 + 0.001
    tl.store(out_ptr + offs, v, mask=mask)
    tl.store(scratch_ptr + offs, t, mask=mask)


def run(x, y):
    out, scratch = torch.empty_like(x), torch.empty_like(x)
    with torch.cuda.stream(SIDE):
        slow_add_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, out, scratch, x.numel(), REPEAT=200_000, BLOCK=1024)
    return out
