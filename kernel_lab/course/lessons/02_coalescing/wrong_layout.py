# Lesson 2, wrong: the tile is stored as it was loaded (particle-major), so the fields come out interleaved.
import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"  # no GPU: Triton's CPU interpreter


@triton.jit
def aos_to_soa_kernel(aos_ptr, soa_ptr, n, BLOCK: tl.constexpr):
    p = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)  # particles of this program
    f = tl.arange(0, 4)  # fields
    mask = (p < n)[:, None]
    tile = tl.load(aos_ptr + p[:, None] * 4 + f[None, :], mask=mask)  # BLOCK x 4, one contiguous block
    tl.store(soa_ptr + p[:, None] * 4 + f[None, :], tile, mask=mask)


N = 2**24 if DEVICE == "cuda" else 1_000  # particles, 4 floats each
SHAPES = [(N,), (1_000_003,) if DEVICE == "cuda" else (333,)]


def make_inputs(n=N):
    return (torch.randn(n, 4, device=DEVICE),)  # array of structures: x y z w x y z w ...


def run(aos):
    n = aos.shape[0]
    soa = torch.empty(4, n, device=aos.device, dtype=aos.dtype)  # structure of arrays: x x x ... y y y ...
    aos_to_soa_kernel[(triton.cdiv(n, 512),)](aos, soa, n, BLOCK=512)
    return soa
