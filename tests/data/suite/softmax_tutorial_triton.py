"""Already good (near the roof): Triton's tutorial fused softmax.

The kernel of Triton's fused-softmax tutorial in its non-persistent form (one program per row,
the whole row in registers, BLOCK_SIZE the next power of two of the row length, num_warps chosen
by block size as the tutorial does): each row is read once and written once, max, exp and sum
happen on chip. 16,384 rows of 4,096 fp32 (256 MB in, 256 MB out): a memory-bound kernel that
moves the minimum number of bytes, near the DRAM roof.
"""
import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
ROWS, COLS = 16384, 4096


@triton.jit
def softmax_kernel(output_ptr, input_ptr, input_row_stride, output_row_stride, n_cols, BLOCK_SIZE: tl.constexpr):
    row_idx = tl.program_id(0)
    row_start_ptr = input_ptr + row_idx * input_row_stride
    col_offsets = tl.arange(0, BLOCK_SIZE)
    input_ptrs = row_start_ptr + col_offsets
    row = tl.load(input_ptrs, mask=col_offsets < n_cols, other=-float("inf"))
    row_minus_max = row - tl.max(row, axis=0)
    numerator = tl.exp(row_minus_max)
    denominator = tl.sum(numerator, axis=0)
    softmax_output = numerator / denominator
    output_row_start_ptr = output_ptr + row_idx * output_row_stride
    output_ptrs = output_row_start_ptr + col_offsets
    tl.store(output_ptrs, softmax_output, mask=col_offsets < n_cols)


def make_inputs():
    torch.manual_seed(0)
    return (torch.randn(ROWS, COLS, device=DEVICE),)


def run(x):
    n_rows, n_cols = x.shape
    BLOCK_SIZE = triton.next_power_of_2(n_cols)
    num_warps = 4
    if BLOCK_SIZE >= 2048:
        num_warps = 8
    if BLOCK_SIZE >= 4096:
        num_warps = 16
    y = torch.empty_like(x)
    softmax_kernel[(n_rows,)](y, x, x.stride(0), y.stride(0), n_cols, num_warps=num_warps, BLOCK_SIZE=BLOCK_SIZE)
    return y


def reference(x):
    return torch.softmax(x, dim=1)
