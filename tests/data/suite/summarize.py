"""The numbers behind the suite's labels: key metrics and Nsight Compute's rule results of each report.

    python3 tests/data/suite/summarize.py [NAME ...]          # text, one block per report
    python3 tests/data/suite/summarize.py --json OUT.json     # everything, machine-readable

Reads the recorded reports with ncu_report (no GPU needed). Reports are stored xz-compressed
(<name>.ncu-rep.xz, byte-identical to ncu's output once decompressed: reports.sha256);
report_path(name) gives a plain .ncu-rep path, decompressing into a temporary folder when needed.
Nothing here decides a label; it prints what the labels in manifest.toml were decided from.
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

KEYS = {
    "duration_us": ("gpu__time_duration.sum", 1e-3),
    "sm_pct": ("sm__throughput.avg.pct_of_peak_sustained_elapsed", 1),
    "mem_pct": ("gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", 1),
    "dram_pct": ("gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed", 1),
    "l1_pct": ("l1tex__throughput.avg.pct_of_peak_sustained_active", 1),
    "l2_pct": ("lts__throughput.avg.pct_of_peak_sustained_elapsed", 1),
    "dram_bytes": ("dram__bytes.sum", 1),
    "dram_read": ("dram__bytes_read.sum", 1),
    "dram_write": ("dram__bytes_write.sum", 1),
    "dram_tbps": ("dram__bytes.sum.per_second", 1e-12),
    "grid": ("launch__grid_size", 1),
    "block": ("launch__block_size", 1),
    "regs": ("launch__registers_per_thread", 1),
    "smem_block": ("launch__shared_mem_per_block", 1),
    "waves": ("launch__waves_per_multiprocessor", 1),
    "theo_occ": ("sm__maximum_warps_per_active_cycle_pct", 1),
    "ach_occ": ("sm__warps_active.avg.pct_of_peak_sustained_active", 1),
    "lim_blocks": ("launch__occupancy_limit_blocks", 1),
    "lim_regs": ("launch__occupancy_limit_registers", 1),
    "lim_smem": ("launch__occupancy_limit_shared_mem", 1),
    "lim_warps": ("launch__occupancy_limit_warps", 1),
    "issue_active": ("smsp__issue_active.avg.per_cycle_active", 1),
    "eligible": ("smsp__warps_eligible.avg.per_cycle_active", 1),
    "cpi": ("smsp__average_warp_latency_per_inst_issued.ratio", 1),
    "threads_per_inst": ("smsp__thread_inst_executed_per_inst_executed.ratio", 1),
    "pred_threads_per_inst": ("smsp__thread_inst_executed_pred_on_per_inst_executed.ratio", 1),
    "spill_requests": ("derived__local_spilling_requests", 1),
    "local_ld_req": ("l1tex__t_requests_pipe_lsu_mem_local_op_ld.sum", 1),
    "local_st_req": ("l1tex__t_requests_pipe_lsu_mem_local_op_st.sum", 1),
    "local_ld_sect": ("l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum", 1),
    "local_st_sect": ("l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum", 1),
    "smem_ld_conf": ("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", 1),
    "smem_ld_wav": ("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", 1),
    "smem_st_conf": ("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", 1),
    "smem_st_wav": ("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum", 1),
    "smem_ld_req": ("smsp__sass_inst_executed_op_shared_ld.sum", 1),
    "excessive_sectors": ("derived__memory_l2_theoretical_sectors_global_excessive", 1),
    "bytes_per_sector_ld": ("smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio", 1),
    "bytes_per_sector_st": ("smsp__sass_average_data_bytes_per_sector_mem_global_op_st.ratio", 1),
    "l1_hit": ("l1tex__t_sector_hit_rate.pct", 1),
    "l2_hit": ("lts__t_sector_hit_rate.pct", 1),
    "gmma_pct": ("sm__inst_executed_pipe_tensor_op_gmma.avg.pct_of_peak_sustained_active", 1),
    "hmma_pct": ("sm__inst_executed_pipe_tensor_op_hmma.avg.pct_of_peak_sustained_active", 1),
    "tensor_pipe_pct": ("sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active", 1),
    "fma_pipe_pct": ("sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active", 1),
    "alu_pipe_pct": ("sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active", 1),
    "fp16_pipe_pct": ("sm__pipe_fp16_cycles_active.avg.pct_of_peak_sustained_active", 1),
    "xu_inst_pct": ("sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active", 1),
    "lsu_inst_pct": ("sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active", 1),
    "red_req": ("l1tex__t_requests_pipe_lsu_mem_global_op_red.sum", 1),
    "atom_req": ("l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum", 1),
    "l2_red_req": ("lts__t_requests_srcunit_tex_op_red.sum", 1),
    "l2_atom_req": ("lts__t_requests_srcunit_tex_op_atom_dot_alu.sum", 1),
    "l2_atomic_unit_pct": ("lts__d_atomic_input_cycles_active.avg.pct_of_peak_sustained_elapsed", 1),
    "smem_atom_conf": ("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_atom.sum", 1),
    "sm_clock_ghz": ("sm__cycles_elapsed.avg.per_second", 1e-9),
    "hgmma_bf16_ops": ("sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32_sparsity_off.sum", 1),
    "hgmma_fp16_ops": ("sm__ops_path_tensor_op_hgmma_src_fp16_sparsity_off.sum", 1),
    "hmma_fp16_ops": ("sm__ops_path_tensor_op_hmma_src_fp16_dst_fp32_sparsity_off.sum", 1),
}
_TMP: Path | None = None


def report_path(name: str) -> Path:
    """A plain .ncu-rep path for report `name` (decompressed once per process, checked against reports.sha256)."""
    global _TMP
    plain = HERE / f"{name}.ncu-rep"
    if plain.exists():
        return plain
    import hashlib
    import lzma
    import tempfile

    if _TMP is None:
        _TMP = Path(tempfile.mkdtemp(prefix="kl_suite_"))
    out = _TMP / f"{name}.ncu-rep"
    if not out.exists():
        data = lzma.decompress((HERE / f"{name}.ncu-rep.xz").read_bytes())
        sums = dict(line.split()[::-1] for line in (HERE / "reports.sha256").read_text().splitlines() if line.strip())
        if sums.get(f"{name}.ncu-rep") not in (None, hashlib.sha256(data).hexdigest()):
            raise ValueError(f"{name}.ncu-rep.xz does not match reports.sha256")
        out.write_bytes(data)
    return out


STALL = re.compile(r"^smsp__average_warps_issue_stalled_(\w+)_per_issue_active\.ratio$")


def summarize(path: Path) -> list[dict]:
    import ncu_report

    ctx = ncu_report.load_report(str(path))
    out = []
    for rng in ctx:
        for act in rng:
            d: dict = {"kernel": act.name(), "demangled": act.name(ncu_report.IAction.NameBase_DEMANGLED)}
            for key, (metric, scale) in KEYS.items():
                m = act.metric_by_name(metric)
                v = m.value() if m is not None else None
                d[key] = v * scale if isinstance(v, (int, float)) else v
            if d.get("dram_bytes") is None and isinstance(d.get("dram_read"), (int, float)) and isinstance(d.get("dram_write"), (int, float)):
                d["dram_bytes"] = d["dram_read"] + d["dram_write"]
            stalls = {}
            for n in act.metric_names():
                s = STALL.match(n)
                if s and s.group(1) not in ("selected",):
                    v = act[n].value()
                    if isinstance(v, (int, float)):
                        stalls[s.group(1)] = v
            d["stalls"] = stalls
            d["stalls_top"] = sorted(stalls.items(), key=lambda kv: -kv[1])[:4]
            m = act.metric_by_name("sass__inst_executed_per_opcode")
            if m is not None and m.has_correlation_ids():
                ids = m.correlation_ids()
                ops = {str(ids.value(i)): float(m.value(i)) for i in range(m.num_instances())}
                tot = sum(ops.values()) or 1.0
                d["opcodes_pct"] = {k: 100 * v / tot for k, v in ops.items()}
                d["opcodes_top"] = [(k, round(100 * v / tot, 1)) for k, v in sorted(ops.items(), key=lambda kv: -kv[1])[:6]]
            rules = []
            for r in act.rule_results_as_dicts():
                msg = r.get("rule_message") or {}
                if int(msg.get("type", 0)) != 2:  # OPT messages only
                    continue
                sp = (r.get("speedup_estimation") or {}).get("speedup")
                rules.append((r.get("rule_identifier"), re.sub(r"@[a-z]+:(?:[^@]*:)?([^:@]*)@", r"\1", msg.get("title", "")),
                              None if sp is None else round(sp, 1)))
            d["rules"] = rules
            out.append(d)
    return out


def fmt(name: str, d: dict) -> str:
    g = lambda k, f="{:.1f}": "-" if d.get(k) is None else f.format(d[k])  # noqa: E731
    lines = [f"== {name}: {d['kernel']}  {g('duration_us')} us  grid {g('grid', '{:.0f}')} x {g('block', '{:.0f}')}  "
             f"regs {g('regs', '{:.0f}')} smem/block {g('smem_block', '{:.0f}')}  waves {g('waves', '{:.2f}')}",
             f"   SM% {g('sm_pct')} MEM% {g('mem_pct')} DRAM% {g('dram_pct')} L1% {g('l1_pct')} L2% {g('l2_pct')}  "
             f"DRAM {g('dram_bytes', '{:.3e}')} B ({g('dram_tbps', '{:.2f}')} TB/s)  L1 hit {g('l1_hit')} L2 hit {g('l2_hit')}  clk {g('sm_clock_ghz', '{:.2f}')} GHz",
             f"   occupancy theo {g('theo_occ')} ach {g('ach_occ')}  limits blocks/regs/smem/warps "
             f"{g('lim_blocks', '{:.0f}')}/{g('lim_regs', '{:.0f}')}/{g('lim_smem', '{:.0f}')}/{g('lim_warps', '{:.0f}')}  "
             f"issue {g('issue_active', '{:.2f}')} eligible {g('eligible', '{:.2f}')} cpi {g('cpi')}",
             f"   threads/inst {g('threads_per_inst')} pred-on {g('pred_threads_per_inst')}  spills {g('spill_requests', '{:.0f}')} "
             f"local ld/st req {g('local_ld_req', '{:.0f}')}/{g('local_st_req', '{:.0f}')}  excessive sectors {g('excessive_sectors', '{:.0f}')} "
             f"B/sector ld {g('bytes_per_sector_ld')} st {g('bytes_per_sector_st')}",
             f"   smem ld conflicts {g('smem_ld_conf', '{:.0f}')}/{g('smem_ld_wav', '{:.0f}')} wavefronts (req {g('smem_ld_req', '{:.0f}')}) "
             f"st {g('smem_st_conf', '{:.0f}')}/{g('smem_st_wav', '{:.0f}')}  atomics red/atom req {g('red_req', '{:.0f}')}/{g('atom_req', '{:.0f}')} "
             f"L2 atomic unit {g('l2_atomic_unit_pct')}%",
             f"   pipes fma {g('fma_pipe_pct')} alu {g('alu_pipe_pct')} fp16 {g('fp16_pipe_pct')} xu(inst) {g('xu_inst_pct')} lsu(inst) {g('lsu_inst_pct')} "
             f"tensor {g('tensor_pipe_pct')} gmma {g('gmma_pct')} hmma {g('hmma_pct')}  tensor ops bf16/fp16 hgmma {g('hgmma_bf16_ops', '{:.3e}')}/{g('hgmma_fp16_ops', '{:.3e}')} hmma fp16 {g('hmma_fp16_ops', '{:.3e}')}",
             "   stalls " + ", ".join(f"{k} {v:.1f}" for k, v in d["stalls_top"]) + "  opcodes " + ", ".join(f"{k} {v}%" for k, v in d.get("opcodes_top", [])),
             "   rules " + "; ".join(f"{r}: {t} ({s})" for r, t, s in d["rules"])]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    out_json = None
    if argv[:1] == ["--json"]:
        out_json, argv = argv[1], argv[2:]
    names = argv or sorted(p.name.split(".")[0] for p in HERE.glob("*.ncu-rep*"))
    data = {}
    for n in names:
        if not (HERE / f"{n}.ncu-rep").exists() and not (HERE / f"{n}.ncu-rep.xz").exists():
            print(f"== {n}: no report")
            continue
        data[n] = summarize(report_path(n))
        if not out_json:
            for d in data[n]:
                print(fmt(n, d))
    if out_json:
        Path(out_json).write_text(json.dumps(data, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
