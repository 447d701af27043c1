"""The corpus of public kernels (tests/cells/corpus): the search finds their knobs where they are set, every
variant it makes is a launch-parameter variant whose grid follows, and on the CPU no variant it screens is wrong."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from kernel_lab.rewrite.base import Measured
from kernel_lab.rewrite.launch import Launch, apply, launches, parameter_only
from kernel_lab.rewrite.search import observed
from kernel_lab.rewrite.space import current, neighbours, space
from kernel_lab.verify.screen import Screener

CORPUS = Path(__file__).resolve().parent / "cells" / "corpus"
INDEX = json.loads((CORPUS / "index.json").read_text())
NAMES = [entry["name"] for entry in INDEX]
#: why a block size may rightly stay: the kernel needs it so (a row covered by one block, computed from the input;
#: the user's own heuristics), not a limit of the search
INHERENT = ("must cover a whole row", "@triton.heuristics")


def cell(name: str) -> str:
    return (CORPUS / f"{name}.py").read_text()


def blocks(launch: Launch) -> list:
    return [k for n, k in launch.knobs.items() if n not in ("num_warps", "num_stages")]


def test_the_corpus_is_a_third_held_out_and_every_cell_says_where_it_comes_from():
    assert len(NAMES) >= 24 and sum(e["held_out"] for e in INDEX) * 3 >= len(NAMES) - 2
    for name in NAMES:
        head = ast.get_docstring(ast.parse(cell(name))) or ""
        assert "Source:" in head and "Licence:" in head, name


def test_the_search_finds_block_sizes_where_the_kernels_allow_on_nine_launches_in_ten():
    found = {name: launches(cell(name)) for name in NAMES}
    assert all(found.values()), [n for n, x in found.items() if not x]
    every = [launch for ls in found.values() for launch in ls]
    covered = [x for x in every if all(k.tunable or any(w in k.why_not for w in INHERENT) for k in blocks(x))]
    assert len(covered) >= 0.9 * len(every), [(x.kernel, x.notes) for x in every if x not in covered]
    for launch in every:
        warps = launch.knobs["num_warps"]  # any value is right, unless a dict the search cannot read may set it
        assert warps.tunable or "cannot read" in warps.why_not, launch.kernel
        assert not [k for k in blocks(launch) if k.role == "other" and k.tunable], launch.kernel
        assert all(k.why_not in " ".join(launch.notes) for k in launch.knobs.values() if not k.tunable)


@pytest.mark.parametrize("name", NAMES)
def test_every_variant_the_search_makes_is_parameter_only_and_its_grid_follows(name):
    source = cell(name)
    for launch in launches(source):
        literal = {n for n, k in launch.knobs.items() if k.value is not None and not k.pinned}
        for knob in blocks(launch):
            if knob.tunable and knob.value is None:
                knob.value = 64 if knob.role != "row" else 1024  # a value the screen would see it run with
        start = current(launch)
        for config in neighbours(launch, start, "memory_bound")[:12]:
            changed = {n: v for n, v in config.items() if v != start[n]}
            variant = apply(source, launch, changed)
            assert parameter_only(source, variant), (launch.kernel, changed)
            (again,) = [x for x in launches(variant) if x.kernel == launch.kernel and x.line == launch.line]
            for n, v in changed.items():  # read back where it was written; the grid's literals with it
                if n in literal:
                    assert again.knobs[n].value == v, (launch.kernel, n, v)
                assert all(node.value == v for node, k in again.grid_sites if k == n), (launch.kernel, n)


CPU = [e["name"] for e in INDEX if e.get("cpu_kernel_lab") == "ok"]


@pytest.mark.slow
@pytest.mark.parametrize("name", CPU)
def test_no_variant_the_screen_passes_is_wrong_on_the_cpu(name):
    """The screen's variants of each corpus cell the interpreter runs, checked against the original on poisoned
    memory: the wrong ones are named, never timed. Here none is wrong: each grid covers its work."""
    source = cell(name)
    launch = max(launches(source), key=lambda x: len(space(x)))
    with Screener(source, device="cpu", workers=1) as screen:
        observed(launch, screen.measure([]))  # what the computed knobs came to
        variants = [
            apply(source, launch, {n: v for n, v in c.items() if v != current(launch)[n]})
            for c in neighbours(launch, current(launch), "memory_bound")[:4]
        ]
        got = screen.measure(variants)
    wrong = [(c, why) for c, why in zip(variants, got.reasons) if why]
    assert not wrong, [why for _, why in wrong]


@pytest.mark.parametrize("name", NAMES)
def test_each_corpus_kernel_recorded_on_the_h200_is_diagnosed_and_its_launches_read(h200, name):
    """Replay: the H200 report of each corpus cell is diagnosed, and its launch record holds the values the search
    reads for the knobs the cell computes (what the screen would see them run with)."""
    import kernel_lab
    from kernel_lab.cells import kernel_names

    result = kernel_lab.diagnose(h200(name))
    assert result.diagnoses and all(d.bottlenecks for d in result.diagnoses), name
    own = set(kernel_names(cell(name)))
    assert {d.kernel.name for d in result.diagnoses} <= own, name
    record = result.profile.record
    assert record is not None and {x.kernel for x in record.launches} <= own and record.inputs
    ran = {x.kernel: {n: v for n, v in x.args if type(v) is int} for x in record.launches}
    for launch in launches(cell(name)):
        if launch.kernel in ran:
            observed(launch, Measured(launched=ran))
            assert all(k.value is not None for k in launch.knobs.values() if k.tunable), (name, launch.kernel)
