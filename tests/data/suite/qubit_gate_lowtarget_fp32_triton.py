"""Planted bottleneck: near roof (near miss for uncoalesced_global: a strided amplitude-pair access the L1 absorbs).

State-vector simulation of a 26-qubit register (a qsim / Qiskit-Aer style simulator): 2^26 amplitudes in
complex64, stored interleaved as fp32 [2^26, 2] (re, im; 512 MB), and one general single-qubit gate U (a U3
rotation, 2 x 2 complex) applied to target qubit 1, out of place (512 MB out). Pair k touches amplitudes i0
= insert a 0 bit at position 1 of k and i1 = i0 | 2: a warp's 32 pairs cover amplitudes 0,1,4,5,8,9,... for
i0 and 2,3,6,7,... for i1, so each 8-byte (re, im) load instruction (the amplitude read as one int64 word)
uses half of every 32-byte sector it touches (16 sectors for 256 useful bytes) and looks uncoalesced. But
the i0 and i1 loads of the same program fetch the complementary halves of the same sectors back to back, so
L1 serves the second from the line the first brought in, and DRAM moves each byte once; the stores likewise
fill whole sectors between them in L2 before write-back. 512 pairs per program (4 warps), 65,536 programs;
1.07 GB moved (~352 us at 3.05 TB/s), 8 FLOP x 4 per pair.
The hypothesis: near_roof: DRAM ~85-92% of peak, DRAM bytes ~1.0x the 1.07 GB needed, ~370-420 us; ncu may
flag the global access pattern (16 bytes used per sector per instruction, L1 hit ~50%) but the bytes that
reach DRAM are minimal. The fix: none needed (a fused multi-gate kernel is the only way to do better: fewer
passes over the state).
"""

import math

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
QUBITS = 26
TARGET = 1
BLOCK = 512
THETA, PHI, LAM = 0.7, 0.3, -1.1  # U3(theta, phi, lambda)


@triton.jit
def _unpack(w):
    """complex64 as one 8-byte word -> (re, im) fp32 (little-endian: re in the low half)."""
    re = w.to(tl.int32).to(tl.float32, bitcast=True)
    im = (w >> 32).to(tl.int32).to(tl.float32, bitcast=True)
    return re, im


@triton.jit
def _pack(re, im):
    lo = re.to(tl.int32, bitcast=True).to(tl.int64) & 0xFFFFFFFF
    hi = im.to(tl.int32, bitcast=True).to(tl.int64) << 32
    return hi | lo


@triton.jit
def qubit_gate_kernel(psi_ptr, out_ptr, npairs, target,
                      u00r, u00i, u01r, u01i, u10r, u10i, u11r, u11i, BLOCK: tl.constexpr):
    # psi_ptr / out_ptr: the complex64 state seen as int64 words (one amplitude = one 8-byte load)
    k = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = k < npairs
    low = k & ((1 << target) - 1)
    i0 = ((k - low) << 1) | low              # insert a 0 bit at the target position
    i1 = i0 + (1 << target)
    a0r, a0i = _unpack(tl.load(psi_ptr + i0, mask=m, other=0))
    a1r, a1i = _unpack(tl.load(psi_ptr + i1, mask=m, other=0))
    b0r = u00r * a0r - u00i * a0i + u01r * a1r - u01i * a1i
    b0i = u00r * a0i + u00i * a0r + u01r * a1i + u01i * a1r
    b1r = u10r * a0r - u10i * a0i + u11r * a1r - u11i * a1i
    b1i = u10r * a0i + u10i * a0r + u11r * a1i + u11i * a1r
    tl.store(out_ptr + i0, _pack(b0r, b0i), mask=m)
    tl.store(out_ptr + i1, _pack(b1r, b1i), mask=m)


def _u3():
    c, s = math.cos(THETA / 2), math.sin(THETA / 2)
    return [[complex(c, 0.0), -complex(math.cos(LAM), math.sin(LAM)) * s],
            [complex(math.cos(PHI), math.sin(PHI)) * s, complex(math.cos(PHI + LAM), math.sin(PHI + LAM)) * c]]


def make_inputs():
    g = torch.Generator(device=DEVICE)
    g.manual_seed(0)
    psi = torch.randn(1 << QUBITS, 2, device=DEVICE, generator=g)
    psi /= psi.norm()                                                    # a normalised random state
    return (psi.contiguous(),)


def run(psi):
    npairs = psi.shape[0] // 2
    out = torch.empty_like(psi)
    u = _u3()
    args = [u[0][0].real, u[0][0].imag, u[0][1].real, u[0][1].imag,
            u[1][0].real, u[1][0].imag, u[1][1].real, u[1][1].imag]
    qubit_gate_kernel[(triton.cdiv(npairs, BLOCK),)](psi.view(torch.int64), out.view(torch.int64), npairs, TARGET, *args,
                                                     BLOCK=BLOCK, num_warps=4)
    return out


def reference(psi):
    n = psi.shape[0]
    a = torch.view_as_complex(psi.double().contiguous()).reshape(n >> (TARGET + 1), 2, 1 << TARGET)
    u = torch.tensor(_u3(), dtype=torch.complex128, device=psi.device)
    b = torch.einsum("rc,gct->grt", u, a).reshape(n)
    return torch.view_as_real(b).float().contiguous()
