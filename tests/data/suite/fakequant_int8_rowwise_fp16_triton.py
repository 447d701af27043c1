"""Already good (near_roof): row-wise int8 fake quantization (quantize-dequantize) in one pass.

Quantization-aware training simulates int8 in fp16: per row, scale = max|x| / 127, then
x -> round(x / scale) * scale. x is [16,384 rows, 4,096] fp16 (128 MB). One program per row keeps
the whole 8 KB row in registers (8 warps, 16 values per thread), takes the max, and writes the
rounded values: one read and one write of the tensor, 256 MB in all (~85 us at 3 TB/s), and a
few dozen instructions per 16 bytes. Nothing is read twice and every access is a contiguous row;
the kernel should sit at the DRAM roof.
"""
import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
ROWS, COLS = 16384, 4096


@triton.jit
def fakequant_rowwise_kernel(x_ptr, out_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(x_ptr + row * N + cols, mask=mask, other=0.0).to(tl.float32)
    amax = tl.maximum(tl.max(tl.abs(x), axis=0), 1e-8)
    scale = amax / 127.0
    q = tl.floor(x / scale + 0.5)  # round half up, |q| <= 127
    tl.store(out_ptr + row * N + cols, (q * scale).to(tl.float16), mask=mask)


def make_inputs():
    torch.manual_seed(0)
    return (torch.randn(ROWS, COLS, device=DEVICE, dtype=torch.float16),)


def run(x):
    out = torch.empty_like(x)
    fakequant_rowwise_kernel[(x.shape[0],)](x, out, x.shape[1], BLOCK=triton.next_power_of_2(x.shape[1]), num_warps=8)
    return out


def reference(x):
    xf = x.float()
    scale = xf.abs().amax(dim=1, keepdim=True).clamp_min(1e-8) / 127.0
    return (torch.floor(xf / scale + 0.5) * scale).half()
