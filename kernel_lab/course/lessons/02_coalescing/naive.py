# Lesson 2, naive: AoS -> SoA, one output element per lane; neighbouring lanes read 16 bytes apart.
import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"  # no GPU: Triton's CPU interpreter


@triton.jit
def aos_to_soa_kernel(aos_ptr, soa_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)  # index into the SoA output, 4 * n values
    mask = i < 4 * n
    field = i // n  # 0..3: x, y, z, w
    p = i % n  # particle
    v = tl.load(aos_ptr + p * 4 + field, mask=mask)
    tl.store(soa_ptr + i, v, mask=mask)


N = 2**24 if DEVICE == "cuda" else 1_000  # particles, 4 floats each
SHAPES = [(N,), (1_000_003,) if DEVICE == "cuda" else (333,)]


def make_inputs(n=N):
    return (torch.randn(n, 4, device=DEVICE),)  # array of structures: x y z w x y z w ...


def run(aos):
    n = aos.shape[0]
    soa = torch.empty(4, n, device=aos.device, dtype=aos.dtype)  # structure of arrays: x x x ... y y y ...
    aos_to_soa_kernel[(triton.cdiv(4 * n, 1024),)](aos, soa, n, BLOCK=1024)
    return soa
