"""Lift a kernel of a profile: its recorded launch, its source and its original, made into a cell."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from kernel_lab import metrics as M
from kernel_lab.cells import parse
from kernel_lab.errors import KernelLabError
from kernel_lab.lifting import library, original
from kernel_lab.lifting import source as src
from kernel_lab.lifting.cell import CannotLift, Lifted, write
from kernel_lab.models import LaunchRecord, Profile

REPLAY_NOTE = "Lifted from a recorded report (replay): nothing ran to lift it."


def launches_of(profile: Profile, kernel: str) -> list[LaunchRecord]:
    """The recorded launches of ``kernel``; a one-line error when the profile has no record or none of it."""
    record = profile.record
    if record is None:
        raise KernelLabError(
            f"{profile.origin} has no launch record, so no launch can be rebuilt from it.",
            fix="Profile the cell with Kernel Lab in a fresh process (it writes <report>.launches.json beside the report).",
        )
    found = [x for x in record.launches if x.kernel == kernel]
    if found:
        return found
    lifted = ", ".join(dict.fromkeys(x.kernel for x in record.launches)) or "none"
    if any(k.name == kernel for k in profile.kernels):
        raise KernelLabError(
            f"{kernel} ran, but no Triton launch of it was recorded (a library binary such as cuBLAS, or CUDA C++):"
            " only Triton kernels can be lifted.",
            fix=f"Triton launches recorded: {lifted}.",
        )
    raise KernelLabError(f"No launch of a kernel named {kernel!r} was recorded.", fix=f"Triton launches recorded: {lifted}.")


def _check_grid(profile: Profile, launch: LaunchRecord, number: int, grid: tuple[int, ...]) -> None:
    """The rebuilt grid has as many blocks as the report measured for that launch (when the report has it)."""
    same = [k for k in profile.kernels if k.name == launch.kernel]
    measured = same[number].get(M.GRID) if number < len(same) else None
    if measured is not None and int(measured) != math.prod(grid):
        raise CannotLift(
            f"The grid rebuilt for {launch.kernel} ({', '.join(map(str, grid))}) has {math.prod(grid)} blocks, but the"
            f" report measured {int(measured)}: the launch is not rebuilt exactly.",
        )


def profile_of(what: Any) -> Profile:
    """The profile of a result, a workload table, a profile, or a recorded report's path (read now)."""
    if isinstance(what, Profile):
        return what
    if isinstance(getattr(what, "profile", None), Profile):
        return what.profile
    if isinstance(getattr(getattr(what, "result", None), "profile", None), Profile):
        return what.result.profile
    if isinstance(what, (str, Path)):
        from kernel_lab.profiling.replay import load

        return load(what)
    raise KernelLabError(
        f"kernel_lab.lift takes a profile result, a workload table or a report's path, not {type(what).__name__}.",
        fix="Pass what %%profile or kernel_lab.profile returned.",
    )


def lift(what: Any, kernel: str | None = None, number: int = 0) -> Lifted:
    """Lift a kernel of ``what`` (a result, a workload table, a profile or a report's path) into a self-contained
    cell: ``kernel`` (default: the longest Triton kernel recorded), its launch ``number`` (0: its first)."""
    profile = profile_of(what)
    return lift_from(profile, kernel or hottest(profile), number)


def hottest(profile: Profile) -> str:
    """The kernel with a recorded Triton launch that took the most GPU time; a one-line error when none has one."""
    recorded = {x.kernel for x in profile.record.launches} if profile.record else set()
    times: dict[str, float] = {}
    for k in profile.kernels:
        if k.name in recorded:
            times[k.name] = times.get(k.name, 0.0) + (k.get(M.DURATION) or 0.0)
    if not times:
        raise KernelLabError(
            "No kernel of this profile can be lifted (no Triton launch of it was recorded).",
            fix="Profile the cell with Kernel Lab in a fresh process: it records the Triton launches beside the report.",
        )
    return max(times, key=lambda name: times[name])


def lift_from(profile: Profile, kernel: str, number: int = 0) -> Lifted:
    """Kernel ``kernel``'s launch ``number`` of ``profile``, as a cell (:mod:`kernel_lab.lifting.cell`)."""
    launches = launches_of(profile, kernel)
    if not 0 <= number < len(launches):
        raise KernelLabError(f"{kernel} was launched {len(launches)} time(s); there is no launch {number}.", fix="Pick 0.")
    launch = launches[number]
    mine = [k.source_files for k in profile.kernels if k.name == kernel]
    found = src.find(kernel, launch.file, [*mine, *(k.source_files for k in profile.kernels)])
    if found is None:
        raise KernelLabError(
            f"The source of {kernel} is neither in the report nor at {launch.file}.",
            fix="Profile with source import (Kernel Lab's default), or run this where the kernel's file is.",
        )
    inductor = launch.origin == "inductor"
    notes = [REPLAY_NOTE] if profile.replay else []
    module = None
    if not inductor:
        kernel_text = _def_text(found.text, kernel)
        here = library.loaded(kernel, launch.file, kernel_text)
        module = library.of_loaded(here) if here is not None else library.of_file(launch.file)
    if module is not None:
        reference = original.by_name(module, kernel)
    else:
        reference = original.from_file(found.text, found.file, kernel, inductor)
        if not inductor:
            notes.append(f"The library's module is not here: reference() runs the copy of {found.file} the report holds.")
    if found.file != launch.file:
        notes.append(f"The report's copy of {kernel} is in {found.file} (Triton reused the binary of that identical text).")
    package = (module.name.rpartition(".")[0] or None) if module else None
    lifted = write(
        launch, found, report=Path(profile.origin).name, reference=reference,
        module=module.name if module else None, package=package, notes=tuple(notes),
    )  # fmt: skip
    _check_grid(profile, launch, number, lifted.grid)
    return lifted


def _def_text(text: str, kernel: str) -> str | None:
    import ast

    fn = src.kernel_def(parse(text), kernel)
    return ast.get_source_segment(text, fn) if fn is not None else None
