"""Poisoned memory: what the next call is handed holds NaN, not what an earlier call left there (the screen and
the judge both run each call on it, so an output element a variant never writes reads as NaN)."""

from __future__ import annotations

import pytest
import torch

from kernel_lab.verify.sandbox import poison


def test_a_block_an_earlier_call_filled_is_poisoned_before_the_next_call_gets_it():
    n = 8192  # 32 KB: malloc hands the freed block to the next request of its size
    left = torch.full((n,), 1.5)
    del left
    poison(torch.device("cpu"), {n * 4})
    handed = torch.empty(n)
    # nothing the earlier call left; NaN but where malloc keeps its own bookkeeping in a freed block (16 to 32 bytes
    # seen, by what the process allocated before: up to 256 allowed)
    assert not (handed == 1.5).any() and int(handed.isnan().sum()) >= n - 64


@pytest.mark.gpu
def test_a_cached_block_beside_a_live_tensor_is_poisoned_too():
    # the caching allocator keeps a segment that holds a live tensor, and hands the next request of a freed block's
    # size that very block: with only a fresh large block filled, a variant writing a quarter of its output matched
    device = torch.device("cuda")
    torch.cuda.empty_cache()
    n = 8 << 20  # 32 MB of float32, in the large pool
    segment = torch.empty(2 * n, device=device)  # one segment, split for the two below
    del segment
    live, right = torch.empty(n, device=device), torch.full((n,), 1.5, device=device)
    same = right.data_ptr()
    del right  # free, cached, beside ``live``: empty_cache cannot give it back
    poison(device, {n * 4})
    handed = torch.empty(n, device=device)
    assert handed.data_ptr() == same and handed.isnan().all()
    del live
