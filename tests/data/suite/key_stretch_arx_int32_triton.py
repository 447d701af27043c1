"""Planted bottleneck: tail effect (165 equal key-stretching programs on 132 SMs that hold one program each).

Password key stretching: each of 1,351,680 pre-hashed passwords (4 x 32-bit words, XORed with a salt)
goes through 256 iterations of an add-rotate-xor mix (a ChaCha quarter round plus the iteration counter)
and the 4-word result is the derived key. A program takes 8,192 passwords with 32 warps (8 per thread,
independent chains to keep the integer pipes fed): triton 3.6 for sm_90 gives it 51 registers (0 spills,
no shared memory), so 1,024 threads x 51 registers fill an SM's 64K registers alone: one program per SM,
132 per wave, and the grid of 165 programs is 1.25 waves. Every program does the same work: the loop
body is 106 SASS instructions per iteration and thread (32 IMAD on the FMA pipe, 72 LOP3 / SHF on the
ALU pipe, which issues every other cycle per scheduler): 32 warps x 256 x 72 = 590K ALU
warp-instructions, ~0.3M cycles, ~0.17 ms per program with its SM to itself. The kernel takes two
program-times (~0.34 ms): 132 programs, then 33 programs alone on 33 SMs while 99 SMs idle, where evenly
spread work would take 1.25 (~0.21 ms). The hypothesis: LaunchConfiguration Tail Effect (1.25 waves,
est. ~50%), SM% averaged over the kernel ~60% with the busy SMs' ALU pipe near its peak, DRAM idle (22
MB in and out); the 50% theoretical occupancy (registers) is a lure (32 warps x 8 independent chains
keep the ALU busy). Smaller programs (many waves) or a grid that is a whole number of waves is the fix.
"""

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
BLOCK = 8192  # passwords per program
PROGRAMS = 165  # 1.25 waves of one program per SM on 132 SMs
ITERS = 256
MASK = 0xFFFFFFFF


@triton.jit
def _rotl(x, r: tl.constexpr):
    return (x << r) | (x >> (32 - r))


@triton.jit
def key_stretch_kernel(pw_ptr, salt_ptr, key_ptr, n, iters, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(pw_ptr + offs, mask=mask, other=0).to(tl.uint32, bitcast=True)
    b = tl.load(pw_ptr + n + offs, mask=mask, other=0).to(tl.uint32, bitcast=True)
    c = tl.load(pw_ptr + 2 * n + offs, mask=mask, other=0).to(tl.uint32, bitcast=True)
    d = tl.load(pw_ptr + 3 * n + offs, mask=mask, other=0).to(tl.uint32, bitcast=True)
    a ^= tl.load(salt_ptr).to(tl.uint32, bitcast=True)
    b ^= tl.load(salt_ptr + 1).to(tl.uint32, bitcast=True)
    c ^= tl.load(salt_ptr + 2).to(tl.uint32, bitcast=True)
    d ^= tl.load(salt_ptr + 3).to(tl.uint32, bitcast=True)
    for i in range(iters):
        a += b
        d = _rotl(d ^ a, 16)
        c += d
        b = _rotl(b ^ c, 12)
        a += b
        d = _rotl(d ^ a, 8)
        c += d
        b = _rotl(b ^ c, 7)
        a ^= i
    tl.store(key_ptr + offs, a.to(tl.int32, bitcast=True), mask=mask)
    tl.store(key_ptr + n + offs, b.to(tl.int32, bitcast=True), mask=mask)
    tl.store(key_ptr + 2 * n + offs, c.to(tl.int32, bitcast=True), mask=mask)
    tl.store(key_ptr + 3 * n + offs, d.to(tl.int32, bitcast=True), mask=mask)


def make_inputs():
    g = torch.Generator(device=DEVICE)
    g.manual_seed(0)
    n = PROGRAMS * BLOCK
    pw = torch.randint(-(2**31), 2**31, (4, n), device=DEVICE, generator=g, dtype=torch.int32)  # [word, password]
    salt = torch.randint(-(2**31), 2**31, (4,), device=DEVICE, generator=g, dtype=torch.int32)
    return pw, salt


def run(pw, salt):
    n = pw.shape[1]
    key = torch.empty_like(pw)
    key_stretch_kernel[(triton.cdiv(n, BLOCK),)](pw, salt, key, n, ITERS, BLOCK=BLOCK, num_warps=32)
    return key


def reference(pw, salt):
    def rotl(x, r):
        return ((x << r) | (x >> (32 - r))) & MASK

    a, b, c, d = ((pw[k].long() ^ salt[k].long()) & MASK for k in range(4))
    for i in range(ITERS):
        a = (a + b) & MASK
        d = rotl(d ^ a, 16)
        c = (c + d) & MASK
        b = rotl(b ^ c, 12)
        a = (a + b) & MASK
        d = rotl(d ^ a, 8)
        c = (c + d) & MASK
        b = rotl(b ^ c, 7)
        a = a ^ i
    out = torch.stack([a, b, c, d])
    return torch.where(out >= 2**31, out - 2**32, out).int()
