"""Planted bottleneck: atomic contention (a per-document word count where every word start adds 1 to its document's counter).

`wc -w` over 8 documents of ~0.5 MiB each (4 MiB of ASCII text, concatenated, with int64 start
offsets): one thread per byte finds its document (binary search over the 9 offsets), decides
whether a word starts there (a non-space byte after a space or at the start of its document) and,
if so, does atomicAdd(&count[doc], 1). About 1 byte in 7 starts a word: ~0.6M atomic adds, and
since the grid walks the text in order, the ~270K bytes resident on the GPU at any moment belong
to one or two documents, so nearly every add lands on one or two addresses and L2 applies them
one after another (~1.75 ns per add on one address, as the suite's sum_atomic_single measured):
~1 ms for text the DRAM streams in ~2 us. Expected: SM and DRAM nearly idle, RED requests funnelled
onto a few addresses, long-scoreboard/drain stalls. The fix is to count per warp (ballot + popc of
word starts, one add per warp) or per block in shared memory, then one add per block and document.
"""

import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#include <cstdint>

__device__ __forceinline__ bool is_space(uint8_t c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; }

__global__ void word_count_per_doc(const uint8_t* __restrict__ text, const int64_t* __restrict__ doc_start,
                                   int docs, int64_t n, int* __restrict__ count) {
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int lo = 0, hi = docs;                     // doc_start[lo] <= i < doc_start[hi]
    while (hi - lo > 1) {
        int mid = (lo + hi) >> 1;
        if (doc_start[mid] <= i) lo = mid; else hi = mid;
    }
    bool starts = !is_space(text[i]) && (i == doc_start[lo] || is_space(text[i - 1]));
    if (starts) atomicAdd(count + lo, 1);      // one add per word, onto the document's counter
}

torch::Tensor wc(torch::Tensor text, torch::Tensor doc_start) {
    int docs = doc_start.numel() - 1;
    int64_t n = text.numel();
    auto count = torch::zeros({docs}, text.options().dtype(torch::kInt32));
    word_count_per_doc<<<(unsigned int)((n + 255) / 256), 256>>>(text.data_ptr<uint8_t>(), doc_start.data_ptr<int64_t>(),
                                                                 docs, n, count.data_ptr<int>());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return count;
}
"""

module = load_inline(
    "kls_word_count_per_doc_uint8_cuda",
    cpp_sources="torch::Tensor wc(torch::Tensor text, torch::Tensor doc_start);",
    cuda_sources=CUDA_SRC,
    functions=["wc"],
    extra_cuda_cflags=["-O3", "-lineinfo"],
)

TEXT_BYTES = 4 << 20
DOCS = 8
SPACES = torch.tensor([ord(" "), ord("\n"), ord("\t"), ord("\r")], dtype=torch.uint8)


def make_inputs():
    g = torch.Generator(device="cuda")
    g.manual_seed(0)
    # words of lowercase letters separated by spaces (1 in 6 bytes) and newlines (1 in 60)
    u = torch.rand(TEXT_BYTES, device="cuda", generator=g)
    letters = torch.randint(ord("a"), ord("z") + 1, (TEXT_BYTES,), device="cuda", generator=g, dtype=torch.int32)
    text = torch.where(u < 1 / 6, ord(" "), torch.where(u < 1 / 6 + 1 / 60, ord("\n"), letters)).to(torch.uint8)
    cuts = torch.randperm(TEXT_BYTES - 1, device="cuda", generator=g)[: DOCS - 1].sort().values + 1
    doc_start = torch.cat(
        [
            torch.zeros(1, device="cuda", dtype=torch.int64),
            cuts.long(),
            torch.full((1,), TEXT_BYTES, device="cuda", dtype=torch.int64),
        ]
    )
    return text, doc_start


def run(text, doc_start):
    return module.wc(text, doc_start)


def reference(text, doc_start):
    n = text.numel()
    space = torch.isin(text, SPACES.to(text.device))
    idx = torch.arange(n, device=text.device)
    doc = torch.searchsorted(doc_start, idx, right=True) - 1
    prev_space = torch.ones_like(space)
    prev_space[1:] = space[:-1]
    first = idx == doc_start[doc]
    starts = ~space & (prev_space | first)
    return torch.bincount(doc[starts], minlength=doc_start.numel() - 1).int()
