"""What Kernel Lab asks Nsight Compute to collect, and why.

The default is a *targeted* set: the sections whose metrics and rules the conductor reads,
plus a few raw metrics for the roofline and tensor-core checks. It costs far fewer replay
passes than ``--set full`` while keeping every number a hint cites.
"""

from __future__ import annotations

#: Sections collected by default (ids as printed by ``ncu --list-sections``).
DEFAULT_SECTIONS: tuple[str, ...] = (
    "SpeedOfLight",  # SM / memory throughput, the SOLBottleneck rule
    "LaunchStats",  # grid, block, registers, shared memory, waves; LaunchConfiguration rule
    "Occupancy",  # theoretical / achieved occupancy and the limiters
    "MemoryWorkloadAnalysis",  # DRAM bytes, hit rates, local-memory spilling
    "MemoryWorkloadAnalysis_Tables",  # bytes per sector, bank conflicts (SharedMemoryConflicts rule)
    "SourceCounters",  # per-line excessive sectors, PC-sampled stalls, source markers
    "WarpStateStats",  # stall reasons, divergence
    "SchedulerStats",  # issue-slot utilization
    "ComputeWorkloadAnalysis",  # pipe utilization
    "InstructionStats",  # opcode mix
    "SpeedOfLight_RooflineChart",  # FP32/FP64 roofline counters and peaks
)

#: Raw metrics added to the sections: half-precision and tensor-core work, and the L1/L2/DRAM
#: peaks the hierarchical roofline needs.
EXTRA_METRICS: tuple[str, ...] = (
    "smsp__sass_thread_inst_executed_op_hadd_pred_on.sum.per_cycle_elapsed",
    "smsp__sass_thread_inst_executed_op_hmul_pred_on.sum.per_cycle_elapsed",
    "smsp__sass_thread_inst_executed_op_hfma_pred_on.sum.per_cycle_elapsed",
    "sm__sass_thread_inst_executed_op_hfma_pred_on.sum.peak_sustained",
    "sm__inst_executed_pipe_tensor_op_gmma.avg.pct_of_peak_sustained_active",
    "sm__inst_executed_pipe_tensor_op_hmma.avg.pct_of_peak_sustained_active",
    "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active",
    "sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32_sparsity_off.sum",
    "sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32_sparsity_off.sum.peak_sustained",
    "sm__ops_path_tensor_op_hgmma_src_fp16_sparsity_off.sum",
    "sm__ops_path_tensor_op_hgmma_src_tf32_dst_fp32_sparsity_off.sum",
    "sm__ops_path_tensor_op_hgmma_src_tf32_dst_fp32_sparsity_off.sum.peak_sustained",
    "sm__ops_path_tensor_op_hmma_src_bf16_dst_fp32_sparsity_off.sum",
    "sm__ops_path_tensor_op_hmma_src_bf16_dst_fp32_sparsity_off.sum.peak_sustained",
    "sm__ops_path_tensor_op_hmma_src_fp16_dst_fp32_sparsity_off.sum",
    "sm__ops_path_tensor_op_hmma_src_tf32_dst_fp32_sparsity_off.sum",
    "dram__bytes.sum.peak_sustained",
    "dram__cycles_elapsed.avg.per_second",
    "lts__t_bytes.sum",
    "lts__lts2xbar_cycles_active.sum.peak_sustained",
    "lts__cycles_elapsed.avg.per_second",
    "l1tex__t_bytes.sum",
    "l1tex__lsu_writeback_active_mem_lgds.sum.peak_sustained",
    "l1tex__cycles_elapsed.avg.per_second",
)

#: NVTX domain and push/pop range that scope what is profiled (see ``runner.py``).
NVTX_DOMAIN = "kernel_lab"
NVTX_RANGE = "profile"
NVTX_INCLUDE = f"{NVTX_DOMAIN}@{NVTX_RANGE}/"
