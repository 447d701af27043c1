"""CPU-only pre-check of the Triton cells (Triton's interpreter, TRITON_INTERPRET=1), at small sizes.

    TRITON_INTERPRET=1 python3 tests/data/suite/cpu_check.py [NAME ...]

Each cell is executed with its size constants replaced by the small values below (the kernels'
code is unchanged), then run(*make_inputs()) is compared with reference(*inputs) the way
check_time.py does it on the GPU. This only proves that the kernels are valid Triton and compute
the right function; CUDA cells are compiled with nvcc instead (see README.md).
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import torch

os.environ.setdefault("TRITON_INTERPRET", "1")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from check_time import compare  # noqa: E402

SMALL: dict[str, dict] = {
    "layernorm_3pass_fp32_triton": dict(ROWS=4, COLS=300, BLOCK=64),
    "layernorm_2pass_fp32_triton": dict(ROWS=4, COLS=300, BLOCK=64),
    "embedding_gather_bf16_triton": dict(VOCAB=1000, DIM=16, TOKENS=100),
    "poly_horner_fp16_triton": dict(N=3000, DEGREE=16),
    "chain_walk_triton": dict(NODES=4096, PROGRAMS=8, STEPS=8),
    "chase_lanes_1warp_triton": dict(NODES=4096, CHAINS=8, STEPS=4),
    "chase_lanes_4warp_triton": dict(NODES=4096, CHAINS=8, STEPS=4),
    "chase_feat_early_triton": dict(NODES=4096, PROGRAMS=2, STEPS=4, W=64),
    "chase_feat_late_triton": dict(NODES=4096, PROGRAMS=2, STEPS=4, W=64),
    "transpose_1d_index_bf16_triton": dict(R=64, C=32),
    "transpose_tiled_bf16_triton": dict(R=128, C=192),
    "aos_field_read_fp16_triton": dict(N=3000),
    "deinterleave_stride2_fp32_triton": dict(N=3000),
    "layernorm_few_rows_bf16_triton": dict(ROWS=2, COLS=9000, BLOCK=4096),
    "gemm_few_tiles_fp16_triton": dict(M=128, N=256, K=192),
    "gemm_tail_fp16_triton": dict(M=128, N=256, K=192),
    "gemm_notail_fp16_triton": dict(M=256, N=128, K=192),
    "matmul_tutorial_fp16_triton": dict(M=128, N=512, K=128),
    "matmul_bcast_fp16_triton": dict(M=64, N=64, K=64),
    "matmul_dot_fp16_triton": dict(M=64, N=64, K=64),
    "conv1d_fma_bf16_triton": dict(B=1, CIN=4, COUT=32, T=256),
    "softmax_spill_triton": dict(ROWS=2, COLS=10000),
    "softmax_tutorial_triton": dict(ROWS=3, COLS=1000),
    "sum_2pass_triton": dict(N=50000),
    "scatter_add_hot_rows_triton": dict(ROWS=100),
    "tiny_softmax_triton": {},
    "tiny_sum_4prog_fp16_triton": {},
    # held-out set 2
    # Triton's CPU interpreter gets tl.dot on bf16 wrong (it passes in fp16 and fp32): the logic is checked in fp16
    # here, bf16 on the GPU.
    "attn_fwd_tail_bf16_triton": dict(B=1, H=2, SQ=256, SK=256, DTYPE=torch.float16),
    "attn_per_head_fp16_triton": dict(B=1, H=2, S=256),
    "fakequant_int8_rowwise_fp16_triton": dict(ROWS=8, COLS=4096),
    "maxpool2x2_fp16_triton": dict(PLANES=2, HIN=16, WIN=64),
    "rope_halfsplit_bf16_triton": dict(T=16, H=4),
    "topk_itermax_fp16_triton": dict(ROWS=4),
    "xent_2pass_bf16_triton": dict(ROWS=4, VOCAB=8192),
    # held-out set 3
    "adam_flat_fp32_triton": dict(N=5000, BLOCK=1024),
    "cdist_dot_fp16_triton": dict(M=192, N=128, D=64),
    "resize_bilinear_down_fp32_triton": dict(PLANES=2, HIN=40, WIN=256, HOUT=16, WOUT=128, ROWS=8, COLS=64),
    "ema_decay_seq_bf16_triton": dict(B=2, T=16, C=384, BLOCK_C=128),
    "dropout_philox_bf16_triton": dict(N=5000),
    "spmm_csr_gather_bf16_triton": dict(ROWS=64, COLS=1000, FEAT=128),
    "spmv_ell_padded_fp32_triton": dict(ROWS=100, COLS=1000),
    "ema_few_channels_fp32_triton": dict(T=16, C=3072, BLOCK_C=1024),
    # held-out set 4
    "pagerank_pull_vertex_fp16_triton": dict(VERTICES=200),
    "fft_stockham_tiny_fp32_triton": dict(SIGNALS=2, POINTS=256, BLOCK=64),
    "int4_dequant_group_bf16_triton": dict(ROWS=4, COLS=1024),
    "ray_sphere_depth_fp32_triton": dict(RAYS=600, SPHERES=40),
    "lut_pwl_act_bf16_triton": dict(N=5000),
    "segsum_few_long_bf16_triton": dict(SEGMENTS=3, MIN_LEN=3000, MAX_LEN=9000),
    "black_scholes_fp32_triton": dict(N=5000),
    "covariance_outer_bf16_triton": dict(SAMPLES=48, FEATURES=128),
    "standardize_cols_3pass_fp16_triton": dict(ROWS=300, COLS=192),
    "adler32_per_file_uint8_triton": dict(FILES=3, MIN_BYTES=20000, MAX_BYTES=60000),
    "thomas_rows_fp32_triton": dict(SYSTEMS=300, NEQ=16),
    "color_matrix_thumbnail_fp16_triton": {},
    # held-out set 6
    "fir_direct_taps_fp32_triton": dict(FRAMES=100),
    "key_stretch_arx_int32_triton": dict(PROGRAMS=3, BLOCK=64, ITERS=20),
    "dilate_tiny_mask_uint8_triton": {},
    "q6_filter_persistent_fp32_triton": dict(ROWS=50000, BLOCK=1024),
    "nv12_to_rgb_norm_fp16_triton": dict(FRAMES=2, H=8, W=300),
    "gumbel_max_few_rows_bf16_triton": dict(ROWS=3, VOCAB=5000, BLOCK=512),
    "residual_histogram_atomic_int16_triton": dict(N=5000),
    "tet_gradient_gather_fp32_triton": dict(CELLS=5),
    # held-out set 7
    "focal_loss_elem_fp16_triton": dict(N=5000, BLOCK=1024),
    "verlet_aos_record_fp32_triton": dict(N=3000, BLOCK=256),
    "additive_synth_partials_fp32_triton": dict(N=100000, PARTIALS=8, BLOCK=1024),
    "gc_content_tiny_uint8_triton": {},
    "acf_lags_reread_fp16_triton": dict(N=50000, LAGS=8, BLOCK=1024),
    "iir_vertical_smooth_fp16_triton": dict(FRAMES=2, ROWS=16, COLS=300),
    # held-out set 8
    "pose_compose_soa_bf16_triton": dict(N=5000, BLOCK=1024),
    "rdf_pair_bins_fp32_triton": dict(N=300),
    "kepler_orbits_fp32_triton": dict(OBJECTS=300, EPOCHS=20),
    "fps_cloud_per_program_fp32_triton": dict(CLOUDS=2, POINTS=1000, SAMPLES=64),
    "nmo_trace_lanes_fp16_triton": dict(TRACES=70, NT=256, TILE_T=128),
    "trending_decay_hours_int16_triton": dict(ITEMS=1000, HOURS=40),
    # held-out set 9
    "dewpoint_magnus_fp16_triton": dict(N=5000, BLOCK=1024),
    "patch_pca_project_fp16_triton": dict(PATCHES=100, VOX=64, COMP=32, BLOCK_M=32),
    "proto_byte_counters_atomic_int16_triton": dict(N=5000),
    "angular_spectrum_interleaved_fp32_triton": dict(PLANES=2, NY=16, NX=64, BLOCK=256),
    "lfp_bandpower_channels_fp16_triton": dict(CHANNELS=3, SAMPLES=5000, BLOCK=1024),
    "viewport_transform_tiny_fp32_triton": dict(VERTS=300),
    # held-out set 10
    "venue_pressure_atomic_fp32_triton": dict(N=5000),
    "feeder_voltage_fixedpoint_tail_fp32_triton": dict(PROGRAMS=5, BLOCK=64, ITERS=40),
    "adcp_beam_aos_fp16_triton": dict(N=5000, BLOCK=1024),
    "contact_logits_fma_fp16_triton": dict(B=2, L=100, D=32, BM=32, BN=32),
    "garment_verlet_per_program_fp32_triton": dict(GARMENTS=3, SIDE=40, BLOCK=256),
    "rd_map_db_1warp_int16_triton": dict(N=5000),
    # held-out set 11
    "crop_class_biomass_atomic_int32_triton": dict(N=5000),
    "ctm_freeway_steps_tiny_fp16_triton": dict(CELLS=600, STEPS=20),
    "soap_kernel_fma_bf16_triton": dict(M=128, N=64, D=32),
    "tour_length_per_depot_fp32_triton": dict(DEPOTS=3, STOPS=5000, BLOCK=256),
    "webmercator_lonlat_pairs_fp32_triton": dict(N=5000),
    "lbl_voigt_band_tail_fp16_triton": dict(POINTS=3000, LINES=50),
    # held-out set 12
    "spi_anomaly_3pass_bf16_triton": dict(DAYS=37, CELLS=600),
    "qubit_gate_lowtarget_fp32_triton": dict(QUBITS=12),
    "cycler_channel_stats_fp16_triton": dict(CHANNELS=3, SAMPLES=5000),
    "zone_occupancy_atomic_int32_triton": dict(N=5000),
    "gassmann_fluidsub_1warp_fp16_triton": dict(N=3000),
    "reproj_residual_gather_fp32_triton": dict(OBS=5000, POINTS=1000, CAMS=16),
    # held-out set 13
    "xol_aggregate_cap_2pass_fp16_triton": dict(TREATIES=6, EVENTS=5000, BLOCK=512),
    "nnue_dense_bcast_bf16_triton": dict(POSITIONS=100),
    "fdtd_tmz_ez_update_fp32_triton": dict(NY=8, NX=300, BLOCK_X=128),
    "pruning_site_major_catprog_fp32_triton": dict(SITES=1000, BLOCK=64),
    "mppi_rollout_atomic_bf16_triton": dict(ROBOTS=2, ROLLOUTS=1000, HORIZON=4),
    "ricker_patches_seq_fp16_triton": dict(YEARS=20, PATCHES=300),
    # held-out set 14
    "socs_clip_bcast_fma_fp16_triton": dict(CLIPS=200, BLOCK_M=32),
    "sn_sweep_diagonal_launches_fp32_triton": dict(NX=8, NY=6, ANG=2, BLOCK=32),
    "boris_push_aos_record_fp32_triton": dict(N=3000, BLOCK=256),
    "stem_loudness_3pass_bf16_triton": dict(STEMS=5, SAMPLES=5000, BLOCK=1024),
    "j2_rk4_eclipse_fp32_triton": dict(OBJECTS=700, STEPS=12),
    "pacing_landscape_chain_fp16_triton": dict(CAMPAIGNS=600, SLOTS=40),
}


def main() -> int:
    names = sys.argv[1:] or sorted(SMALL)
    failed = 0
    for name in names:
        t0 = time.time()
        path = HERE / f"{name}.py"
        ns: dict = {"__name__": "__main__", "__file__": str(path)}
        try:
            exec(compile(path.read_text(), str(path), "exec"), ns)  # noqa: S102
            ns.update(SMALL.get(name, {}))
            inputs = ns["make_inputs"]()
            out = ns["run"](*inputs)
            ref = ns["reference"](*inputs)
            tol = ns.get("TOLERANCE")
            if tol is None and out.dtype == torch.float32:
                tol = 1e-5
            ok, what = compare(out, ref, tol)
        except Exception as e:  # noqa: BLE001
            ok, what = False, f"ERROR {type(e).__name__}: {str(e)[:600]}"
        failed += not ok
        print(f"{'OK  ' if ok else 'FAIL'} {name:36s} {what} [{time.time() - t0:.1f}s]", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
