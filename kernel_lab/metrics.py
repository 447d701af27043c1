"""Names of the Nsight Compute metrics the analysis reads (see ../shared/NCU.md)."""

from __future__ import annotations

DURATION = "gpu__time_duration.sum"  # ns
SM_PCT = "sm__throughput.avg.pct_of_peak_sustained_elapsed"
MEM_PCT = "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"
DRAM_PCT = "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"
L2_PCT = "lts__throughput.avg.pct_of_peak_sustained_elapsed"
L1_PCT = "l1tex__throughput.avg.pct_of_peak_sustained_active"
DRAM_READ = "dram__bytes_read.sum"
DRAM_WRITE = "dram__bytes_write.sum"
DRAM_BW = "dram__bytes.sum.per_second"
DRAM_PEAK_PER_CYCLE = "dram__bytes.sum.peak_sustained"
DRAM_CLOCK = "dram__cycles_elapsed.avg.per_second"

GRID = "launch__grid_size"
BLOCK = "launch__block_size"
REGISTERS = "launch__registers_per_thread"
SHARED_PER_BLOCK = "launch__shared_mem_per_block"
WAVES = "launch__waves_per_multiprocessor"
SM_COUNT = "launch__sm_count"
THEORETICAL_OCC = "sm__maximum_warps_per_active_cycle_pct"
ACHIEVED_OCC = "sm__warps_active.avg.pct_of_peak_sustained_active"
#: max blocks per SM allowed by each resource, by the limiter name of the vocabulary
OCCUPANCY_LIMITS = {
    "registers": "launch__occupancy_limit_registers",
    "shared_memory": "launch__occupancy_limit_shared_mem",
    "warps": "launch__occupancy_limit_warps",
    "block_size": "launch__occupancy_limit_blocks",
}

ISSUE_ACTIVE = "smsp__issue_active.avg.per_cycle_active"
STALL_PREFIX = "smsp__average_warps_issue_stalled_"
STALL_SUFFIX = "_per_issue_active.ratio"

LTS_ACTIVE = "lts__cycles_active.sum"
LTS_ELAPSED = "lts__cycles_elapsed.sum"
SECTORS_GLOBAL = "memory_l2_theoretical_sectors_global"
SECTORS_EXCESSIVE = "derived__memory_l2_theoretical_sectors_global_excessive"
BYTES_PER_SECTOR_LD = "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio"

SHARED_LD_CONFLICTS = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"
SHARED_ST_CONFLICTS = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"
SHARED_LD_WAVEFRONTS = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"
SHARED_ST_WAVEFRONTS = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"
SHARED_LD_REQUESTS = "smsp__sass_inst_executed_op_shared_ld.sum"
SHARED_ST_REQUESTS = "smsp__sass_inst_executed_op_shared_st.sum"

THREADS_PER_INST = "smsp__thread_inst_executed_per_inst_executed.ratio"
THREADS_PRED_ON_PER_INST = "smsp__thread_inst_executed_pred_on_per_inst_executed.ratio"

SPILL_REQUESTS = "derived__local_spilling_requests"
LOCAL_LD_REQUESTS = "l1tex__t_requests_pipe_lsu_mem_local_op_ld.sum"
LOCAL_ST_REQUESTS = "l1tex__t_requests_pipe_lsu_mem_local_op_st.sum"
GLOBAL_LD_REQUESTS = "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"
GLOBAL_ST_REQUESTS = "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"

#: L2 atomic units: the average slice, and the busiest one (one address lives in one slice)
ATOMIC_UNIT_AVG = "lts__d_atomic_input_cycles_active.avg.pct_of_peak_sustained_elapsed"
ATOMIC_UNIT_MAX = "lts__d_atomic_input_cycles_active.max.pct_of_peak_sustained_elapsed"

PIPE_PREFIX = "sm__pipe_"
PIPE_SUFFIX = "_cycles_active.avg.pct_of_peak_sustained_active"
PIPE_FMA = "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active"
PIPE_TENSOR = "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active"
OPCODE_MIX = "sass__inst_executed_per_opcode"  # instanced by opcode; see Kernel.opcodes


def stall_reasons(kernel) -> dict[str, float]:
    """Warp stall reasons -> cycles per issued instruction (``selected`` excluded)."""
    out = {}
    for name, value in kernel.metrics.items():
        if name.startswith(STALL_PREFIX) and name.endswith(STALL_SUFFIX):
            reason = name[len(STALL_PREFIX) : -len(STALL_SUFFIX)]
            if reason != "selected":
                out[reason] = value
    return out


def busiest_pipe(kernel) -> tuple[str, float] | None:
    """(pipe, % of peak) of the busiest pipe; on a tie, the plainest name ('tensor' rather than Hopper's 'shared' pipe,
    which FP64 and tensor work share, or 'tensor_op_hmma')."""
    pipes = pipe_utilization(kernel)
    if not pipes:
        return None
    top = max(pipes.values())
    return min((n for n, v in pipes.items() if v == top), key=lambda n: (n == "shared", len(n))), top


def pipe_utilization(kernel) -> dict[str, float]:
    """Pipe name -> % of peak active cycles (``sm__pipe_<name>_cycles_active``)."""
    out = {}
    for name, value in kernel.metrics.items():
        if name.startswith(PIPE_PREFIX) and name.endswith(PIPE_SUFFIX):
            out[name[len(PIPE_PREFIX) : -len(PIPE_SUFFIX)]] = value
    return out
