"""Planted bottleneck: small grid (Adler-32 checksums of 32 files, one program per file).

Adler-32 (zlib's checksum) of 32 files of 3.5..4.5 MiB each (~128 MiB in all, packed in one byte
buffer at 4 KiB boundaries, with int64 starts and sizes), as a deduplicating or archiving tool
computes one checksum per file. One program (4 warps) per file walks it in 4 KiB chunks: per chunk
the byte sum and the position-weighted byte sum (exact in int32), folded into the running (a, b)
pair modulo 65521. 32 programs on 132 SMs: 100 SMs get nothing, and each busy SM has one program
with one 4 KiB chunk (two 16-byte loads per thread) in flight, then two block-wide reductions
before the next: ~1 us per chunk, ~1,000 chunks per file, ~1 ms for what the DRAM streams in
~45 us at 3.05 TB/s. Expected: ncu's small-grid finding (0.24 programs per SM), DRAM and SM nearly idle.
The fix is to split each file across many programs (Adler-32 of concatenated pieces combines in
closed form, as zlib's adler32_combine does).
"""

import zlib

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
FILES = 32
MIN_BYTES, MAX_BYTES = 7 << 19, 9 << 19  # 3.5 .. 4.5 MiB
PAGE = 4096  # files start on 4 KiB boundaries of the buffer
BLOCK = 4096  # bytes per chunk


@triton.jit
def adler32_file_kernel(data_ptr, starts_ptr, sizes_ptr, out_ptr, BLOCK: tl.constexpr):
    f = tl.program_id(0)
    start = tl.multiple_of(tl.load(starts_ptr + f), 16)
    n = tl.load(sizes_ptr + f)
    pos = tl.arange(0, BLOCK)
    weight = BLOCK - pos  # each byte's weight in b within a full chunk
    a = n * 0 + 1  # int64 running sums
    b = n * 0
    full = n - n % BLOCK
    for off in range(0, full, BLOCK):  # full chunks: unmasked 16-byte loads
        x = tl.load(data_ptr + start + off + pos).to(tl.int32)
        s1 = tl.sum(x, axis=0)
        s2 = tl.sum(x * weight, axis=0)  # <= 255 * 4096 * 4097 / 2 < 2^31: exact in int32
        b = (b + BLOCK * a + s2) % 65521
        a = (a + s1) % 65521
    length = n - full  # the last, partial chunk
    x = tl.load(data_ptr + start + full + pos, mask=pos < length, other=0).to(tl.int32)
    s1 = tl.sum(x, axis=0)
    s2 = tl.sum(x * (length.to(tl.int32) - pos), axis=0)
    b = (b + length * a + s2) % 65521
    a = (a + s1) % 65521
    tl.store(out_ptr + f, b * 65536 + a)


def make_inputs():
    g = torch.Generator(device=DEVICE)
    g.manual_seed(0)
    sizes = torch.randint(MIN_BYTES, MAX_BYTES + 1, (FILES,), device=DEVICE, generator=g)
    padded = (sizes + PAGE - 1) // PAGE * PAGE
    starts = torch.zeros(FILES, device=DEVICE, dtype=torch.int64)
    starts[1:] = padded.cumsum(0)[:-1]
    data = torch.zeros(int(padded.sum()), device=DEVICE, dtype=torch.uint8)
    for f in range(FILES):
        s, n = int(starts[f]), int(sizes[f])
        data[s : s + n] = torch.randint(0, 256, (n,), device=DEVICE, generator=g, dtype=torch.int32).to(torch.uint8)
    return data, starts, sizes


def run(data, starts, sizes):
    files = starts.numel()
    out = torch.empty(files, device=data.device, dtype=torch.int64)
    adler32_file_kernel[(files,)](data, starts, sizes, out, BLOCK=BLOCK, num_warps=4)
    return out


def reference(data, starts, sizes):
    raw = data.cpu().numpy().tobytes()
    sums = [zlib.adler32(raw[s : s + n]) for s, n in zip(starts.tolist(), sizes.tolist())]
    return torch.tensor(sums, dtype=torch.int64, device=data.device)
