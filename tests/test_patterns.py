"""Source patterns that need a rewrite (analysis/patterns.py, analysis/lanes.py): found in a kernel's source, confirmed
by its metrics on reports recorded on the H200 (tests/data/h200), and not found where the code is fine."""

from __future__ import annotations

import ast
import json
import textwrap
from pathlib import Path

import pytest

import kernel_lab
from kernel_lab.analysis import conductor, lanes, patterns
from kernel_lab.analysis.kernel_code import KernelCode
from kernel_lab.models import LaunchRecord, TensorRecord

ROOT = Path(__file__).resolve().parent
CORPUS = [e["name"] for e in json.loads((ROOT / "cells" / "corpus" / "index.json").read_text())]


def code(source: str) -> KernelCode:
    text = textwrap.dedent(source)
    fn = next(n for n in ast.walk(ast.parse(text)) if isinstance(n, ast.FunctionDef))
    return KernelCode("cell.py", fn, tuple(text.splitlines()))


def launch(args: dict) -> LaunchRecord:
    def value(v):
        return TensorRecord((1024,), v, (1,), 4096, 0, 4096) if isinstance(v, str) else v

    return LaunchRecord("k", "cell.py", 1, (1,), tuple((n, value(v)) for n, v in args.items()))


def found(source: str, args: dict | None = None) -> list[tuple[str, int]]:
    return [(m.pattern, m.line) for m in patterns.find(code(source), launch(args) if args else None)]


# --- the patterns, on small kernels ---------------------------------------------------------------------------------

MATMUL = """
def mm(a_ptr, b_ptr, c_ptr, n, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, n, BK):
        rk = k + tl.arange(0, BK)
        a = tl.load(a_ptr + rm[:, None] * n + rk[None, :]).to(tl.float32)
        b = tl.load(b_ptr + rk[:, None] * n + rn[None, :]).to(tl.float32)
        acc += tl.sum(a[:, :, None] * b[None, :, :], axis=1)
    tl.store(c_ptr + rm[:, None] * n + rn[None, :], acc)
"""


def test_a_broadcast_multiply_and_sum_is_a_matrix_product_for_tl_dot_in_the_dtype_it_was_launched_with():
    (m,) = patterns.find(code(MATMUL), launch({"a_ptr": "float16", "b_ptr": "float16", "c_ptr": "float16", "n": 64}))
    assert (m.pattern, m.kind, m.line) == ("broadcast_sum_matmul", "tensor_cores_unused", 10)
    assert "tl.dot(a, b)" in m.change and "float16" in m.change and "no .to(tl.float32)" in m.change
    (fp32,) = patterns.find(code(MATMUL), launch({"a_ptr": "float32", "b_ptr": "float32", "c_ptr": "float32", "n": 64}))
    assert "TF32" in fp32.change


def test_the_product_is_found_under_a_cast_and_its_operands_transposed_as_tl_dot_needs():
    cast = MATMUL.replace(
        "tl.sum(a[:, :, None] * b[None, :, :], axis=1)", "tl.sum((a[:, :, None] * b[None, :, :]).to(tl.float32), 1)"
    )
    assert found(cast) == [("broadcast_sum_matmul", 10)]
    # x (M, K) against w stored (N, K): the sum runs over the last axis, so w goes in transposed
    rows = MATMUL.replace("tl.sum(a[:, :, None] * b[None, :, :], axis=1)", "tl.sum(a[:, None, :] * b[None, :, :], axis=2)")
    (m,) = patterns.find(code(rows))
    assert "tl.dot(a, tl.trans(b))" in m.change


def test_a_sum_over_a_broadcast_axis_or_of_two_dimensions_is_not_a_matrix_product():
    outer = MATMUL.replace("tl.sum(a[:, :, None] * b[None, :, :], axis=1)", "tl.sum(a[:, :, None] * b[None, :, :], axis=2)")
    rowdot = MATMUL.replace("tl.sum(a[:, :, None] * b[None, :, :], axis=1)", "tl.sum(a * b, axis=1)")
    assert found(outer) == [] and found(rowdot) == []


ATOMICS = """
def total(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    {line}
"""


@pytest.mark.parametrize(
    "line",
    [
        "tl.atomic_add(out_ptr + offs * 0, x, mask=mask)",
        "tl.atomic_add(out_ptr + tl.zeros_like(offs), x, mask=mask)",
        "tl.atomic_max(out_ptr, x, mask=mask)",
    ],
)
def test_every_lane_updating_one_address_asks_for_a_block_reduction(line):
    (m,) = patterns.find(code(ATOMICS.format(line=line)))
    assert (m.pattern, m.line) == ("one_address_atomics", 6) and "once per program" in m.change


@pytest.mark.parametrize(
    "line",
    [
        "tl.atomic_add(out_ptr, tl.sum(x, axis=0))",  # reduced first: one update per program
        "tl.atomic_add(out_ptr + offs, x, mask=mask)",  # every lane its own address
        "tl.atomic_add(out_ptr + offs // n, x, mask=mask)",  # a few addresses: not the pattern
    ],
)
def test_atomics_that_are_already_reduced_or_spread_out_are_left_alone(line):
    assert found(ATOMICS.format(line=line)) == []


STRIDED = """
def copy(x_ptr, out_ptr, n, stride, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    row, col = offs // n, offs % n
    rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    cols = tl.arange(0, BLOCK)
    idx = tl.load(x_ptr + offs)
    {line}
"""


@pytest.mark.parametrize(
    "line",
    [
        "tl.store(out_ptr + offs, tl.load(x_ptr + col * n + row))",  # a transpose by flat index
        "tl.store(out_ptr + offs, tl.load(x_ptr + offs * 10))",  # an array of 10-float records
        "tl.store(out_ptr + offs, tl.load(x_ptr + cols[None, :] * stride + rows[:, None] * stride))",
    ],
)
def test_lanes_a_row_length_apart_ask_for_a_2d_tile(line):
    (m,) = patterns.find(code(STRIDED.format(line=line)))
    assert (m.pattern, m.kind, m.line) == ("strided_lanes", "uncoalesced_global", 8) and "2-D tile" in m.change


@pytest.mark.parametrize(
    "line",
    [
        "tl.store(out_ptr + offs, tl.load(x_ptr + row * n + col))",  # row-major: neighbours adjacent
        "tl.store(out_ptr + rows[:, None] * n + cols[None, :], tl.load(x_ptr + cols[None, :] * n + rows[:, None]))",
        "tl.store(out_ptr + offs, tl.load(x_ptr + idx))",  # a gather: the data sets the addresses
        "tl.store(out_ptr + offs, tl.load(x_ptr + offs // n))",  # a broadcast: neighbours share an address
        "tl.store(out_ptr + offs, tl.load(x_ptr + offs * 2))",  # stride 2: every sector half used, not a lane each
    ],
)
def test_coalesced_gathered_and_broadcast_addresses_are_not_strided(line):
    assert found(STRIDED.format(line=line)) == []


def test_a_stride_argument_is_read_from_the_launch():
    line = "tl.store(out_ptr + offs, tl.load(x_ptr + rows[:, None] * n + cols[None, :] * stride))"
    source = STRIDED.format(line=line)
    assert found(source) == [("strided_lanes", 8)]  # unknown stride: it may be a row length
    assert found(source, {"x_ptr": "float32", "out_ptr": "float32", "n": 512, "stride": 1}) == []
    assert found(source, {"x_ptr": "float32", "out_ptr": "float32", "n": 512, "stride": 512}) == [("strided_lanes", 8)]


def test_the_lanes_of_a_flat_index_split_into_row_and_column():
    fn = code(STRIDED.format(line="tl.store(out_ptr + col * n + row, tl.load(x_ptr + offs))")).fn
    store = next(a for a in lanes.accesses(fn, ["x_ptr", "out_ptr"]) if a.op == "store")
    assert store.pointer.pointers == {"out_ptr"} and store.pointer.axes == {0: lanes.ROW}
    load = next(a for a in lanes.accesses(fn, ["x_ptr", "out_ptr"], {"n": 64.0}) if a.op == "load" and a.line == 8)
    assert load.pointer.axes == {0: 1.0} and store.value is not None and store.value.data


# --- confirmed by the metrics, on recorded reports -------------------------------------------------------------------


def test_the_broadcast_sum_matmul_is_told_tl_dot_first(h200):
    (d,) = kernel_lab.diagnose(h200("matmul_broadcast_sum")).diagnoses
    first = d.bottlenecks[0]
    assert first.kind == "tensor_cores_unused" and first.score >= 0.9, [b.kind for b in d.bottlenecks]
    assert first.source_lines[0].line == 24 and "tl.dot(a, b)" in first.hint and "float16" in first.hint
    assert first.evidence["precision"] == "Tensor TF32"  # Triton made TF32 products of the fp32 copies
    before = conductor.diagnose_kernel(d.kernel)  # the rules alone: no tensor-core reading
    assert "tensor_cores_unused" not in [b.kind for b in before.bottlenecks]


def test_per_element_atomics_onto_one_address_come_first_with_the_block_reduction(h200):
    (d,) = kernel_lab.diagnose(h200("sum_atomic_per_element")).diagnoses
    first = d.bottlenecks[0]
    assert first.kind == "atomic_contention" and first.source_lines[0].line == 17
    assert "tl.sum(values, axis=0)" in first.hint and "Measured: Atomic contention" in first.hint
    before = conductor.diagnose_kernel(d.kernel)
    assert before.bottlenecks[0].kind == "latency_bound"  # the rules alone put the regime first


def test_the_strided_transpose_keeps_the_rules_estimate_and_gains_its_line_and_change(h200):
    (d,) = kernel_lab.diagnose(h200("transpose_strided_reads")).diagnoses
    before = conductor.diagnose_kernel(d.kernel)
    first = d.bottlenecks[0]
    assert first.kind == before.bottlenecks[0].kind == "uncoalesced_global"
    assert first.score == before.bottlenecks[0].score and [b.kind for b in d.bottlenecks] == [b.kind for b in before.bottlenecks]
    assert first.source_lines[0].line == 18 and "2-D tile" in first.hint and "8,192 elements" in first.hint


@pytest.mark.parametrize("name", [*CORPUS, "softmax_fused", "softmax_three_pass", "layernorm_two_kernels", "bias_gelu_chain"])
def test_where_no_pattern_is_confirmed_the_ranking_is_the_rules_own(h200, name):
    result = kernel_lab.diagnose(h200(name))
    for d in result.diagnoses:
        alone = conductor.diagnose_kernel(d.kernel)
        assert [(b.kind, b.score, b.hint) for b in d.bottlenecks] == [(b.kind, b.score, b.hint) for b in alone.bottlenecks]


def test_one_atomic_per_program_is_not_a_pattern():
    source = (Path(kernel_lab.__file__).parent / "course" / "lessons" / "07_reductions" / "example_atomics.py").read_text()
    fn = next(n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.FunctionDef) and n.name == "partial_sum_kernel")
    assert patterns.find(KernelCode("example_atomics.py", fn, tuple(source.splitlines()))) == []
