"""Planted bottleneck: launch overhead (GC content of 16 short reads: one tiny launch).

GC fraction and count of unknown bases of 16 sequencing reads of 150 bases (ASCII 'A', 'C', 'G', 'T',
'N'), as a QC step run per small batch: one program per read, 256 lanes (the read padded by the mask),
2.4 KB read and 128 bytes written. The kernel is a few microseconds at most, all of it launch and
ramp-up: 16 programs of 4 warps on 132 SMs, each doing one masked load, two compares and a reduction.
The hypothesis: duration ~2-4 us, SM% and MEM% ~0-2%, the grid a fraction of one wave; the fix is to
batch many reads per launch or fuse the step into its neighbours, not to change the kernel's code.
"""

import torch
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
READS = 16
LEN = 150
BLOCK = 256


@triton.jit
def gc_content_kernel(seq_ptr, out_ptr, length, BLOCK: tl.constexpr):
    r = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < length
    b = tl.load(seq_ptr + r * length + offs, mask=mask, other=0).to(tl.int32)
    gc = tl.sum(((b == 67) | (b == 71)).to(tl.int32), axis=0)  # 'C', 'G'
    unk = tl.sum((b == 78).to(tl.int32), axis=0)  # 'N'
    called = length - unk
    frac = gc.to(tl.float32) / tl.maximum(called, 1).to(tl.float32)
    tl.store(out_ptr + 2 * r, frac)
    tl.store(out_ptr + 2 * r + 1, unk.to(tl.float32))


def make_inputs():
    g = torch.Generator(device=DEVICE)
    g.manual_seed(0)
    alphabet = torch.tensor([65, 67, 71, 84, 78], device=DEVICE, dtype=torch.uint8)  # A C G T N
    p = torch.tensor([0.29, 0.2, 0.2, 0.29, 0.02], device=DEVICE)
    idx = torch.multinomial(p, READS * LEN, replacement=True, generator=g)
    return (alphabet[idx].view(READS, LEN).contiguous(),)


def run(seq):
    reads, length = seq.shape
    out = torch.empty(reads, 2, device=seq.device, dtype=torch.float32)
    gc_content_kernel[(reads,)](seq, out, length, BLOCK=BLOCK, num_warps=4)
    return out


def reference(seq):
    s = seq.long()
    gc = ((s == 67) | (s == 71)).sum(1)
    unk = (s == 78).sum(1)
    frac = gc.float() / (seq.shape[1] - unk).clamp_min(1).float()
    return torch.stack([frac, unk.float()], dim=1)
