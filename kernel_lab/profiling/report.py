"""Read an Nsight Compute report (``.ncu-rep``) into a :class:`~kernel_lab.models.Profile`.

Uses ``ncu_report`` (PyPI ``ncu-report``), which parses reports with no GPU and no ncu.
"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path
from typing import Any

from kernel_lab.errors import KernelLabError, ReportError
from kernel_lab.models import Kernel, Profile, RuleResult
from kernel_lab.profiling import launches

#: Per-instruction counters of the SourceCounters section, summed per source line.
LINE_COUNTERS: dict[str, str] = {
    "stall_samples": "smsp__pcsamp_sample_count",
    "global_sectors": "memory_l2_theoretical_sectors_global",
    "excessive_sectors": "derived__memory_l2_theoretical_sectors_global_excessive",
    "shared_excessive_wavefronts": "derived__memory_l1_wavefronts_shared_excessive",
    "instructions": "inst_executed",
    "thread_instructions": "thread_inst_executed",
}
#: Executed warp instructions per SASS opcode (InstructionStats section).
OPCODES = "sass__inst_executed_per_opcode"
#: Per SASS PC: threads that executed the instruction with their predicate on (what the *_pred_on op counts count).
THREAD_INSTRUCTIONS = "thread_inst_executed_true"
#: A half-precision add, multiply or FMA in SASS (predicate guard first, if any), and its operands.
_HALF = re.compile(r"(?:@!?U?P\w+\s+)?(HADD|HMUL|HFMA)2\S*\s+(.*)")
_SEVERITY = {1: "INF", 2: "OPT", 3: "WRN", 4: "ERR"}
_SCOPE = {1: "local", 2: "global"}
_URL = re.compile(r"@url:([^:@]*):[^@]*@")
_LINK = re.compile(r"@(?:section|sass|source):(?:[^@]*:)?([^:@]*)@")
_MAGIC = b"NVR\0"
READER = "2026.3"  # the first ncu-report with IAction.sections(); keep in step with pyproject.toml


def plain(text: str) -> str:
    """Strip Nsight Compute's link markup (``@section:Id:text@`` and friends) from a message."""
    return _LINK.sub(r"\1", _URL.sub(r"\1", text)).strip()


def _rules(action: Any) -> tuple[RuleResult, ...]:
    out = []
    for r in action.rule_results_as_dicts():
        msg = r.get("rule_message") or {}
        severity = _SEVERITY.get(int(msg.get("type", 0)))
        if not severity:
            continue
        speedup = r.get("speedup_estimation") or {}
        out.append(
            RuleResult(
                rule=r.get("rule_identifier", ""),
                section=r.get("section_identifier", ""),
                title=plain(msg.get("title", "")),
                message=plain(msg.get("message", "")),
                severity=severity,
                speedup_pct=speedup.get("speedup"),
                speedup_scope=_SCOPE.get(int(speedup.get("type", 0))),
            )
        )
    return tuple(out)


def _line_counters(action: Any) -> dict[str, dict[tuple[str, int], float]]:
    where: dict[int, tuple[str, int] | None] = {}

    def line_of(pc: int) -> tuple[str, int] | None:
        if pc not in where:
            info = action.source_info(pc)
            where[pc] = (info.file_name(), info.line()) if info is not None and info.line() else None
        return where[pc]

    out: dict[str, dict[tuple[str, int], float]] = {}
    for key, name in LINE_COUNTERS.items():
        metric = action.metric_by_name(name)
        if metric is None or not metric.has_correlation_ids():
            continue
        pcs = metric.correlation_ids()
        per_line: dict[tuple[str, int], float] = defaultdict(float)
        for i in range(metric.num_instances()):
            loc = line_of(pcs.value(i))
            value = metric.value(i)
            if loc is not None and isinstance(value, (int, float)):
                per_line[loc] += value
        if per_line:
            out[key] = dict(per_line)
    return out


def _not_flops(action: Any) -> dict[str, float] | None:
    """Thread instructions of HADD2/HMUL2/HFMA2 with a zero register among the first two sources, per op: no
    arithmetic (``HFMA2.MMA R0, -RZ, RZ, 0, 0`` puts a constant in a register, ``HADD2.F32 R1, -RZ, R2.H0_H0``
    converts an fp16 value to fp32), though Nsight Compute counts them as half-precision FLOPs."""
    metric = action.metric_by_name(THREAD_INSTRUCTIONS)
    if metric is None or not metric.has_correlation_ids() or not metric.num_instances():
        return None
    out = {"hadd": 0.0, "hmul": 0.0, "hfma": 0.0}
    pcs = metric.correlation_ids()
    for i in range(metric.num_instances()):
        found = _HALF.fullmatch((action.sass_by_pc(pcs.value(i)) or "").strip())
        if found and any(o.strip().lstrip("-|").split(".")[0] == "RZ" for o in found[2].split(",")[1:3]):
            out[found[1].lower()] += float(metric.value(i))
    return out


def _opcodes(action: Any) -> dict[str, float]:
    metric = action.metric_by_name(OPCODES)
    if metric is None or not metric.has_correlation_ids():
        return {}
    ids = metric.correlation_ids()
    return {str(ids.value(i)): float(metric.value(i)) for i in range(metric.num_instances())}


def _sections(action: Any) -> dict[str, str]:
    """Metric name -> id of the section that shows it (metrics no section shows are left out)."""
    out: dict[str, str] = {}
    for section in action.sections():
        for metric in (*section.header_metrics(), *section.body_metrics()):
            out.setdefault(metric.name(), section.identifier())
    return out


def _reader() -> Any:
    """The ``ncu_report`` module, once it is known to have what Kernel Lab reads."""
    import ncu_report

    if not hasattr(ncu_report.IAction, "sections"):
        from importlib.metadata import version

        raise KernelLabError(
            f"ncu-report {version('ncu-report')} is too old for Kernel Lab:", fix=f"pip install 'ncu-report>={READER}'"
        )
    return ncu_report


def kernel_from_action(index: int, action: Any) -> Kernel:
    """Turn one ``ncu_report`` action into a :class:`Kernel`."""
    import ncu_report

    metrics: dict[str, float] = {}
    units: dict[str, str] = {}
    attributes: dict[str, str] = {}
    arrays: dict[str, tuple[float, ...]] = {}
    for name in action.metric_names():
        metric = action[name]
        value = metric.value()
        if isinstance(value, str):
            attributes[name] = value
        elif isinstance(value, (int, float)):
            metrics[name] = float(value)
            units[name] = metric.unit()
            if metric.num_instances() > 1:
                arrays[name] = tuple(float(metric.value(i)) for i in range(metric.num_instances()))
    name = action.name()
    if not name or not metrics:
        raise ReportError(
            f"Kernel result {index} in the report is incomplete (the file looks truncated).",
            fix="Profile again, or copy the report file again in full.",
        )
    return Kernel(
        index=index,
        name=name,
        demangled=action.name(ncu_report.IAction.NameBase_DEMANGLED) or name,
        metrics=metrics,
        units=units,
        attributes=attributes,
        rules=_rules(action),
        line_counters=_line_counters(action),
        opcodes=_opcodes(action),
        sections=_sections(action),
        source_files=dict(action.source_files()),
        arrays=arrays,
        not_flops=_not_flops(action),
    )


def load(path: str | Path, *, collector: str = "", replay: bool = True) -> Profile:
    """Read every kernel result of the report at ``path``.

    Raises :class:`ReportError` for a missing, foreign, truncated or empty file.
    """
    path = Path(path)
    if path.is_dir():
        raise ReportError(
            f"{path} is a directory, not a report.", fix="Give the path of a .ncu-rep file (or of a torch.profiler .json trace)."
        )
    if not path.is_file():
        raise ReportError(f"No report at {path}.", fix="Check the path, or profile the kernel first.")
    with path.open("rb") as fh:
        if fh.read(4) != _MAGIC:
            raise ReportError(
                f"{path} is not an Nsight Compute report.",
                fix="Pass a .ncu-rep file written by `ncu -o` or `kernel-lab profile`.",
            )
    context = _reader().load_report(str(path))
    actions = [action for rng in context for action in rng]
    kernels = [kernel_from_action(i, action) for i, action in enumerate(actions)]
    if not kernels:
        raise ReportError(
            f"{path} holds no kernel results (it is empty or truncated).",
            fix="Profile again; if ncu printed warnings, no kernel matched its filters.",
        )
    return Profile(
        kernels=tuple(kernels),
        origin=str(path),
        collector=collector or "Nsight Compute report",
        replay=replay,
        record=launches.load(launches.record_path(path)),
    )
