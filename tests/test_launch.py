"""Launch styles as public kernels write them: where each knob is set, whether the grid follows, and what a
variant may change (kernel_lab.rewrite.launch)."""

from __future__ import annotations

import textwrap

import pytest

from kernel_lab.rewrite.base import Measured
from kernel_lab.rewrite.launch import apply, launches, parameter_only
from kernel_lab.rewrite.search import observed
from kernel_lab.rewrite.space import space

HEAD = "import torch, triton\nimport triton.language as tl\n"

TILED = HEAD + textwrap.dedent(
    """
    @triton.jit
    def mm(a, b, c, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
        pid_m, pid_n = tl.program_id(0), tl.program_id(1)
        rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k in range(0, K, BLOCK_K):
            rk = k + tl.arange(0, BLOCK_K)
            acc += tl.dot(tl.load(a + rm[:, None] * K + rk[None, :]), tl.load(b + rk[:, None] * N + rn[None, :]))
        tl.store(c + rm[:, None] * N + rn[None, :], acc)

    def run(a, b):
        M, K = a.shape
        N = b.shape[1]
        c = torch.empty(M, N)
        grid = (triton.cdiv(M, 32), triton.cdiv(N, 32))
        mm[grid](a, b, c, M, N, K, BLOCK_M=32, BLOCK_N=32, BLOCK_K=32)
        return c
    """
)

ROW = HEAD + textwrap.dedent(
    """
    def calculate_settings(n):
        BLOCK_SIZE = triton.next_power_of_2(n)
        return BLOCK_SIZE, 8 if BLOCK_SIZE >= 2048 else 4

    @triton.jit
    def rms_norm(Y, X, W, stride, n_cols, eps, BLOCK_SIZE: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK_SIZE)
        mask = cols < n_cols
        x = tl.load(X + row * stride + cols, mask=mask, other=0.0)
        rstd = 1 / tl.sqrt(tl.sum(x * x, axis=0) / n_cols + eps)
        tl.store(Y + row * stride + cols, x * rstd * tl.load(W + cols, mask=mask), mask=mask)

    def run(x, w):
        n_rows, n_cols = x.shape
        y = torch.empty_like(x)
        BLOCK_SIZE, num_warps = calculate_settings(n_cols)
        rms_norm[(n_rows,)](y, x, w, x.stride(0), n_cols, 1e-6, BLOCK_SIZE=BLOCK_SIZE, num_warps=num_warps)
        return y
    """
)

ELEMENTWISE = HEAD + textwrap.dedent(
    """
    @triton.jit
    def add(x, y, out, n, BLOCK_SIZE: tl.constexpr):
        offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
        mask = offsets < n
        tl.store(out + offsets, tl.load(x + offsets, mask=mask) + tl.load(y + offsets, mask=mask), mask=mask)
    """
)


def one(source: str):
    (launch,) = launches(source)
    return launch


def test_a_grid_computed_into_a_variable_follows_its_block_sizes():
    # on the H200 the search once shrank BLOCK_M with this grid unchanged: each variant computed a quarter of C
    launch = one(TILED)
    assert {n: k.role for n, k in launch.knobs.items() if n.startswith("BLOCK")} == {
        "BLOCK_M": "tile",
        "BLOCK_N": "tile",
        "BLOCK_K": "loop",
    }
    smaller = apply(TILED, launch, {"BLOCK_M": 16})
    assert "grid = (triton.cdiv(M, 16), triton.cdiv(N, 32))" in smaller and "BLOCK_M=16, BLOCK_N=32, BLOCK_K=32" in smaller
    deeper = apply(TILED, launch, {"BLOCK_K": 64})
    assert "grid = (triton.cdiv(M, 32), triton.cdiv(N, 32))" in deeper and "BLOCK_K=64" in deeper
    assert parameter_only(TILED, smaller) and parameter_only(TILED, deeper)


def test_a_grid_that_cannot_follow_keeps_its_block_sizes_and_says_why():
    helper = (
        TILED.replace("grid = (triton.cdiv(M, 32), triton.cdiv(N, 32))", "grid = grid_of(M, N)")
        + "\ndef grid_of(M, N):\n    return (triton.cdiv(M, 32), triton.cdiv(N, 32))\n"
    )
    launch = one(helper)
    assert not launch.knobs["BLOCK_M"].tunable and not launch.knobs["BLOCK_N"].tunable
    assert "grid_of(M, N)" in launch.knobs["BLOCK_M"].why_not and "leave work undone" in launch.knobs["BLOCK_M"].why_not
    assert launch.knobs["BLOCK_K"].tunable  # a loop step needs no grid
    assert "BLOCK_M" not in space(launch) and "BLOCK_K" in space(launch)


def test_a_block_in_a_variable_is_changed_where_it_is_assigned_and_the_grid_reads_it():
    source = ELEMENTWISE + textwrap.dedent(
        """
        BLOCK = 1024

        def run(x, y):
            out = torch.empty_like(x)
            n = x.numel()
            add[(triton.cdiv(n, BLOCK),)](x, y, out, n, BLOCK_SIZE=BLOCK)
            return out
        """
    )
    launch = one(source)
    assert launch.params == {"BLOCK_SIZE": 1024, "num_warps": 4, "num_stages": 3}
    variant = apply(source, launch, {"BLOCK_SIZE": 256, "num_warps": 8})
    assert "BLOCK = 256\n" in variant and "BLOCK_SIZE=BLOCK, num_warps=8)" in variant and launch.grid_sites == []


def test_the_tutorials_meta_grid_follows_and_a_helper_that_launches_is_seen():
    source = ELEMENTWISE + textwrap.dedent(
        """
        def launch_add(x, y, out, block=1024):
            n = out.numel()
            grid = lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]),)
            add[grid](x, y, out, n, BLOCK_SIZE=block)

        def run(x, y):
            out = torch.empty_like(x)
            launch_add(x, y, out)
            return out
        """
    )
    launch = one(source)
    assert launch.knobs["BLOCK_SIZE"].tunable and launch.knobs["BLOCK_SIZE"].value == 1024
    assert "def launch_add(x, y, out, block=4096):" in apply(source, launch, {"BLOCK_SIZE": 4096})
    two_callers = source.replace("launch_add(x, y, out)\n", "launch_add(x, y, out, block=512)\n    launch_add(x, y, out)\n")
    assert "pass different values" in one(two_callers).knobs["BLOCK_SIZE"].why_not


def test_a_row_block_computed_from_the_input_is_left_alone_and_its_warps_are_tuned():
    launch = one(ROW)
    block = launch.knobs["BLOCK_SIZE"]
    assert block.role == "row" and not block.tunable
    assert "calculate_settings(n_cols)" in block.why_not and "cover a whole row" in block.why_not
    warps = launch.knobs["num_warps"]
    assert warps.tunable and warps.value is None  # known once the screen saw it run
    observed(launch, Measured(launched={"rms_norm": {"BLOCK_SIZE": 4096, "num_warps": 8, "n_cols": 4096}}))
    assert warps.value == 8 and not block.tunable and set(space(launch)) == {"num_warps"}
    variant = apply(ROW, launch, {"num_warps": 16})
    assert "BLOCK_SIZE=BLOCK_SIZE, num_warps=16)" in variant and parameter_only(ROW, variant)


def test_a_literal_row_block_only_grows():
    source = ROW.replace("BLOCK_SIZE, num_warps = calculate_settings(n_cols)", "BLOCK_SIZE, num_warps = 1024, 4")
    launch = one(source)
    assert launch.knobs["BLOCK_SIZE"].tunable and min(space(launch)["BLOCK_SIZE"]) == 1024


def test_a_capped_block_that_a_loop_steps_by_is_tuned_at_its_cap():
    source = HEAD + textwrap.dedent(
        """
        @triton.jit
        def row_sum(x, out, n_cols, BLOCK: tl.constexpr):
            row = tl.program_id(0)
            acc = tl.zeros((BLOCK,), tl.float32)
            for start in range(0, n_cols, BLOCK):
                cols = start + tl.arange(0, BLOCK)
                acc += tl.load(x + row * n_cols + cols, mask=cols < n_cols, other=0.0)
            tl.store(out + row, tl.sum(acc, axis=0))

        def run(x):
            out = torch.empty(x.shape[0])
            block = min(4096, triton.next_power_of_2(x.shape[1]))
            row_sum[(x.shape[0],)](x, out, x.shape[1], BLOCK=block)
            return out
        """
    )
    launch = one(source)
    knob = launch.knobs["BLOCK"]
    assert knob.role == "loop" and knob.value is None and knob.moves == "down"  # min(4096, n) runs at n under 4096
    observed(launch, Measured(launched={"row_sum": {"BLOCK": 2048}}))
    assert max(space(launch)["BLOCK"]) == 2048  # a larger cap would change nothing
    assert "block = min(1024, triton.next_power_of_2(x.shape[1]))" in apply(source, launch, {"BLOCK": 1024})


AUTOTUNED = HEAD + textwrap.dedent(
    """
    @triton.autotune(
        configs=[triton.Config({"BLOCK_SIZE": 128}, num_warps=4), triton.Config({"BLOCK_SIZE": 1024}, num_warps=8)],
        key=["n"],
    )
    @triton.jit
    def add(x, y, out, n, BLOCK_SIZE: tl.constexpr):
        offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
        mask = offsets < n
        tl.store(out + offsets, tl.load(x + offsets, mask=mask) + tl.load(y + offsets, mask=mask), mask=mask)

    def run(x, y):
        out = torch.empty_like(x)
        n = out.numel()
        add[lambda META: (triton.cdiv(n, META["BLOCK_SIZE"]),)](x, y, out, n)
        return out
    """
)


def test_an_autotuned_kernel_is_pinned_to_one_configuration_at_a_time():
    launch = one(AUTOTUNED)
    assert launch.knobs["BLOCK_SIZE"].pinned and launch.knobs["BLOCK_SIZE"].tunable
    observed(launch, Measured(launched={"add": {"BLOCK_SIZE": 1024, "num_warps": 8, "n": 5000}}))  # autotune's choice
    assert launch.params == {"BLOCK_SIZE": 1024, "num_warps": 8, "num_stages": 3}
    variant = apply(AUTOTUNED, launch, {"BLOCK_SIZE": 2048})
    assert "configs=[triton.Config({'BLOCK_SIZE': 2048}, num_warps=8, num_stages=3)]," in variant
    assert 'key=["n"]' in variant and parameter_only(AUTOTUNED, variant)
    sneaky = variant.replace("num_warps=8, num_stages=3)]", "num_warps=8, num_stages=3, pre_hook=print)]")
    assert not parameter_only(AUTOTUNED, sneaky)


def test_autotune_configs_made_by_a_function_are_pinned_from_what_autotune_chose():
    source = (
        AUTOTUNED.replace(
            'configs=[triton.Config({"BLOCK_SIZE": 128}, num_warps=4), triton.Config({"BLOCK_SIZE": 1024}, num_warps=8)]',
            "configs=get_configs()",
        )
        + "\ndef get_configs():\n    return [triton.Config({'BLOCK_SIZE': b}, num_warps=w) for b in (256, 512) for w in (4, 8)]\n"
    )
    launch = one(source)
    assert launch.knobs["BLOCK_SIZE"].value is None and "BLOCK_SIZE" not in space(launch)
    observed(launch, Measured(launched={"add": {"BLOCK_SIZE": 512, "num_warps": 4, "num_stages": 3}}))
    variant = apply(source, launch, {"num_warps": 2})
    hook = "pre_hook=(get_configs())[0].pre_hook"  # configs made by code may carry one: kept
    assert f"configs=[triton.Config({{'BLOCK_SIZE': 512}}, num_warps=2, num_stages=3, {hook})]," in variant
    assert parameter_only(source, variant)
    assert not parameter_only(source, variant.replace(hook, "pre_hook=(get_configs() + [print])[0].pre_hook"))


HOOKED = HEAD + textwrap.dedent(
    """
    def zeroed(nargs):
        nargs["out"].zero_()

    def configs(hook):
        return [triton.Config({"BLOCK": b}, num_warps=4, pre_hook=hook) for b in (32, 64)]

    @triton.autotune(configs=configs(zeroed), key=["n"])
    @triton.jit
    def total(x, out, n, BLOCK: tl.constexpr):
        offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.atomic_add(out, tl.sum(tl.load(x + offsets, mask=offsets < n, other=0.0)))

    def run(x):
        out = torch.empty(1)
        total[lambda META: (triton.cdiv(x.numel(), META["BLOCK"]),)](x, out, x.numel())
        return out

    def make_inputs(n=1000):
        return (torch.randn(n),)
    """
)


def test_a_pinned_configuration_keeps_the_pre_hook_its_kernel_needs():
    """The hook zeroes the output the kernel adds into (FlagGems' TMA matmuls set descriptors' block shapes in theirs):
    a variant that dropped it sums into poisoned memory, and the screen calls it wrong."""
    from kernel_lab.verify.screen import Screener

    launch = one(HOOKED)
    assert launch.hooks and launch.knobs["BLOCK"].pinned
    observed(launch, Measured(launched={"total": {"BLOCK": 32, "num_warps": 4, "num_stages": 3}}))
    variants = [apply(HOOKED, launch, {"BLOCK": 64}), apply(HOOKED, launch, {"num_warps": 2})]
    assert all("pre_hook=(configs(zeroed))[0].pre_hook" in v and parameter_only(HOOKED, v) for v in variants)
    dropped = variants[0].replace(", pre_hook=(configs(zeroed))[0].pre_hook", "")
    with Screener(HOOKED, device="cpu", workers=1) as screen:
        got = screen.measure([*variants, dropped])
    assert not any(got.reasons[:2]) and "NaN values" in got.reasons[2], got.reasons


def test_heuristics_a_config_dict_positional_constexprs_and_a_grid_stride_loop():
    heuristic = (
        ELEMENTWISE.replace("@triton.jit", '@triton.heuristics({"BLOCK_SIZE": lambda args: 512})\n@triton.jit')
        + "\ndef run(x, y):\n    out = torch.empty_like(x)\n    add[(triton.cdiv(x.numel(), 512),)](x, y, out, x.numel())\n    return out\n"
    )
    launch = one(heuristic)
    assert launch.knobs["BLOCK_SIZE"].value == 512 and [n for _, n in launch.grid_sites] == ["BLOCK_SIZE"]
    assert '"BLOCK_SIZE": lambda args: 256})' in apply(heuristic, launch, {"BLOCK_SIZE": 256})
    computed = heuristic.replace("lambda args: 512", 'lambda args: triton.next_power_of_2(args["n"])')
    assert "@triton.heuristics" in one(computed).knobs["BLOCK_SIZE"].why_not
    dict_cfg = ELEMENTWISE + textwrap.dedent(
        """
        CONFIG = {"BLOCK_SIZE": 256, "num_warps": 2}

        def run(x, y):
            out = torch.empty_like(x)
            for part in range(2):
                add[(triton.cdiv(x.numel(), CONFIG["BLOCK_SIZE"]),)](x, y, out, x.numel(), **CONFIG)
            return out
        """
    )
    launch = one(dict_cfg)
    assert launch.params["BLOCK_SIZE"] == 256 and launch.params["num_warps"] == 2
    assert 'CONFIG = {"BLOCK_SIZE": 1024, "num_warps": 8}' in apply(dict_cfg, launch, {"BLOCK_SIZE": 1024, "num_warps": 8})
    positional = (
        ELEMENTWISE
        + "\ndef run(x, y):\n    out = torch.empty_like(x)\n    add[(triton.cdiv(x.numel(), 64),)](x, y, out, x.numel(), 64)\n    return out\n"
    )
    assert one(positional).params[
        "BLOCK_SIZE"
    ] == 64 and "add[(triton.cdiv(x.numel(), 128),)](x, y, out, x.numel(), 128)" in apply(
        positional, one(positional), {"BLOCK_SIZE": 128}
    )
    strided = HEAD + textwrap.dedent(
        """
        @triton.jit
        def scale(x, out, n, BLOCK: tl.constexpr):
            for start in range(tl.program_id(0) * BLOCK, n, tl.num_programs(0) * BLOCK):
                offs = start + tl.arange(0, BLOCK)
                tl.store(out + offs, 2 * tl.load(x + offs, mask=offs < n), mask=offs < n)

        def run(x):
            out = torch.empty_like(x)
            scale[(132,)](x, out, x.numel(), BLOCK=1024)
            return out
        """
    )
    assert one(strided).knobs["BLOCK"].tunable and one(strided).grid_sites == []  # any grid covers the work


@pytest.mark.parametrize(
    "change",
    [
        ("num_warps=num_warps)", "num_warps=2 * 4)"),  # an expression where a literal goes runs code
        ("BLOCK_SIZE=BLOCK_SIZE,", "BLOCK_SIZE=4096,"),  # a block the kernel needs to cover its row, as a literal
        ("1e-6,", "1e-5,"),  # an argument
        ("num_warps=num_warps)", "num_warps=num_warps, debug=True)"),  # an option that is not a knob
    ],
)
def test_a_variant_that_changes_more_than_knobs_is_not_parameter_only(change):
    assert not parameter_only(ROW, ROW.replace(*change))
    assert parameter_only(ROW, ROW.replace("num_warps=num_warps)", "num_warps=8)"))
    added = (
        ELEMENTWISE
        + "\ndef run(x, y):\n    out = torch.empty_like(x)\n    add[(triton.cdiv(x.numel(), 64),)](x, y, out, x.numel(), BLOCK_SIZE=64)\n    return out\n"
    )
    assert parameter_only(added, added.replace("BLOCK_SIZE=64)", "BLOCK_SIZE=64, num_warps=8)"))
    assert not parameter_only(added, added.replace("BLOCK_SIZE=64)", "BLOCK_SIZE=64, num_warps=8, num_warps=8)"))
