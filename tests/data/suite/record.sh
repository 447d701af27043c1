#!/usr/bin/env bash
# Records the Nsight Compute reports of the evaluation suite (provenance of tests/data/suite/*.ncu-rep).
#
# Run from the repository root on the GPU machine, with the nvtx wheel in .whl/:
#     bash tests/data/suite/record.sh batch1        # the cells of one recording call (see BATCH1-15 below)
#     bash tests/data/suite/record.sh NAME [NAME…]  # some cells
# Per call: (1) the Triton/torch cells are checked against their references and timed (check_time.py);
# (2) the CUDA cells are built in parallel in the background (each through the profiling runner with no GPU
# visible, so the build lands in the folder the runner uses) while the Triton/torch cells are profiled;
# (3) each CUDA cell is profiled as soon as its build is done; (4) the CUDA cells are checked and timed.
# Checks and timings never overlap a profile. One report per cell, with Kernel Lab's own collection
# (kernel_lab/profiling/sections.py). Reports are copied into $OUT as soon as they exist.
# Results go to $OUT (or /tmp/kls_out): reports_*.tar (the .ncu-rep files) and misc.tar.gz (logs/, checks).
set -u
T0=$(date +%s)
elapsed() { echo $(( $(date +%s) - T0 )); }
DEADLINE=${DEADLINE:-545}   # seconds: no new ncu run starts after this
S=tests/data/suite
W=/tmp/kls_rec
DEST=${OUT:-/tmp/kls_out}
rm -rf "$W"; mkdir -p "$W/reports" "$W/logs" "$DEST"

BATCH1="layernorm_3pass_fp32_triton layernorm_2pass_fp32_triton embedding_gather_bf16_triton poly_horner_fp16_triton
chain_walk_triton chase_lanes_1warp_triton chase_lanes_4warp_triton chase_feat_early_triton chase_feat_late_triton
transpose_1d_index_bf16_triton transpose_tiled_bf16_triton aos_field_read_fp16_triton deinterleave_stride2_fp32_triton
layernorm_few_rows_bf16_triton
softmax_3pass_bf16_cuda sfu_sincos_fp32_cuda nbody_fp32_cuda multipoly_regs_fp32_cuda chase_l2_resident_cuda
chained_scan_cuda spmv_csr_1warp_fp16_cuda spmv_csr_4warp_fp16_cuda spmv_csr_block704_fp16_cuda histogram_bigsmem_cuda
stencil2d_bigtile_cuda rowsum_thread_per_row_fp32_cuda rowsum_warp_per_row_fp32_cuda transpose_smem_conflict_cuda
transpose_smem_padded_cuda transpose_smem_conflict_fp16_cuda batched_matvec_smem_conflict_cuda
batched_matvec_smem_padded_cuda reduce_few_blocks_fp32_cuda"
BATCH2="gemm_few_tiles_fp16_triton gemm_tail_fp16_triton gemm_notail_fp16_triton matmul_tutorial_fp16_triton
matmul_bcast_fp16_triton matmul_dot_fp16_triton conv1d_fma_bf16_triton softmax_spill_triton softmax_tutorial_triton
sum_2pass_triton scatter_add_hot_rows_triton tiny_softmax_triton tiny_sum_4prog_fp16_triton cublas_gemm_bf16_torch
sfu_tail_bf16_cuda stencil_iter_tail_cuda mandelbrot_fp32_cuda lane_loop_bf16_cuda warp_loop_bf16_cuda
stencil_masked_newton_cuda local_hist_dynamic_index_cuda local_hist_smem_cuda bitonic_spill_fp16_cuda
bitonic_regs_fp16_cuda hgemm_half2_cuda sgemm_naive_fp32_cuda sgemm_smem_tiled_fp32_cuda tiny_saxpy_cuda
sum_atomic_single_cuda sum_block_then_atomic_cuda histogram_global_atomic_cuda histogram_smem_private_cuda
copy_vec_fp16_cuda"
BATCH3="attn_fwd_tail_bf16_triton attn_per_head_fp16_triton maxpool2x2_fp16_triton fakequant_int8_rowwise_fp16_triton
rope_halfsplit_bf16_triton topk_itermax_fp16_triton xent_2pass_bf16_triton
attn_rowquad_fp16_cuda avgpool_rowthread_conflict_fp32_cuda quant_absmean_atomic_bf16_cuda quant_sqrtlaw_scan_fp32_cuda
rope_decode_tiny_fp32_cuda rope_token_stride_fp16_cuda moe_topk_local_fp32_cuda xent_smem_row_fp32_cuda"  # held-out set 2
# held-out set 3
BATCH4="adam_flat_fp32_triton cdist_dot_fp16_triton resize_bilinear_down_fp32_triton ema_decay_seq_bf16_triton
ema_few_channels_fp32_triton dropout_philox_bf16_triton spmm_csr_gather_bf16_triton spmv_ell_padded_fp32_triton
adam_thread_chunk_bf16_cuda kmedians_l1_assign_fp32_cuda pdist_simt_fp16_cuda resize_area_smem_bf16_cuda
linrec_smem_seq_fp32_cuda hash_groupby_hotkeys_int32_cuda hashchain_dp_int32_cuda lagfib_ring_local_fp32_cuda"
# held-out set 4
BATCH5="pagerank_pull_vertex_fp16_triton fft_stockham_tiny_fp32_triton int4_dequant_group_bf16_triton
ray_sphere_depth_fp32_triton lut_pwl_act_bf16_triton segsum_few_long_bf16_triton
pagerank_push_hubs_fp32_cuda fwht_rowcol_smem_conflict_fp32_cuda bitplane_transpose64_local_int64_cuda
pip_bbox_divergent_fp32_cuda lut3d_smem_uint8_cuda segsum_thread_per_seg_fp16_cuda"
# held-out set 5
BATCH6="black_scholes_fp32_triton covariance_outer_bf16_triton standardize_cols_3pass_fp16_triton
adler32_per_file_uint8_triton thomas_rows_fp32_triton color_matrix_thumbnail_fp16_triton
mc_asian_block_per_option_fp32_cuda smith_waterman_thread_pair_int16_cuda needleman_wunsch_warp_smem_int32_cuda
word_count_per_doc_uint8_cuda lbm_d2q9_pull_fp32_cuda srgb_to_lab_fp16_cuda"
# held-out set 6
BATCH7="fir_direct_taps_fp32_triton key_stretch_arx_int32_triton dilate_tiny_mask_uint8_triton
q6_filter_persistent_fp32_triton nv12_to_rgb_norm_fp16_triton gumbel_max_few_rows_bf16_triton
residual_histogram_atomic_int16_triton tet_gradient_gather_fp32_triton
chacha20_keystream_uint32_cuda stft_dft_simt_fp16_cuda erode_rows_smem_conflict_fp16_cuda geo_radius_divergent_fp32_cuda
mtf_decode_local_uint8_cuda hex8_matvec_elem_major_bf16_cuda mv_trajectory_trace_int16_cuda minp_sample_smem_fp16_cuda"
# held-out set 7
BATCH8="focal_loss_elem_fp16_triton verlet_aos_record_fp32_triton additive_synth_partials_fp32_triton
gc_content_tiny_uint8_triton acf_lags_reread_fp16_triton iir_vertical_smooth_fp16_triton
triplet_hardmine_simt_fp32_cuda p2g_deposit_sorted_fp32_cuda mel_fbank_smem_conflict_fp32_cuda
kmer_distinct_local_uint8_cuda lambertw_events_divergent_fp32_cuda median3x3_strips_fp16_cuda"
# held-out set 8
BATCH9="pose_compose_soa_bf16_triton rdf_pair_bins_fp32_triton kepler_orbits_fp32_triton
fps_cloud_per_program_fp32_triton nmo_trace_lanes_fp16_triton trending_decay_hours_int16_triton
fk_humanoid_frames_local_fp32_cuda density_matrix_simt_fp16_cuda cvs_velocity_scan_fp16_cuda
aperture_phot_tile_smem_fp32_cuda ball_query_first_k_fp32_cuda embbag_grad_scatter_fp32_cuda"
# held-out set 9
BATCH10="dewpoint_magnus_fp16_triton patch_pca_project_fp16_triton proto_byte_counters_atomic_int16_triton
angular_spectrum_interleaved_fp32_triton lfp_bandpower_channels_fp16_triton viewport_transform_tiny_fp32_triton
wetbulb_bisect_bf16_cuda ct_backproject_smem_sino_fp32_cuda flow_hash_aos_headers_uint8_cuda
tmm_rouard_local_fp32_cuda hh_adaptive_substep_divergent_fp32_cuda msaa_resolve_smem_conflict_fp32_cuda"
# held-out set 10
BATCH11="venue_pressure_atomic_fp32_triton feeder_voltage_fixedpoint_tail_fp32_triton adcp_beam_aos_fp16_triton
contact_logits_fma_fp16_triton garment_verlet_per_program_fp32_triton rd_map_db_1warp_int16_triton
infector_backtrace_int8_cuda pmu_phasor_badflag_fp32_cuda column_mld_smem_conflict_fp32_cuda
contact_map_regtile_bf16_cuda os_cfar_local_sort_fp16_cuda cloth_sdf_collide_divergent_fp32_cuda"
# held-out set 11
BATCH12="crop_class_biomass_atomic_int32_triton ctm_freeway_steps_tiny_fp16_triton soap_kernel_fma_bf16_triton
tour_length_per_depot_fp32_triton webmercator_lonlat_pairs_fp32_triton lbl_voigt_band_tail_fp16_triton
greenampt_runoff_divergent_fp32_cuda route_tt_profile_latency_fp16_cuda eam_density_smem_conflict_fp16_cuda
pallet_first_fit_local_int16_cuda sh_geoid_synthesis_smem_fp32_cuda raman_flatfield_satfix_int16_cuda"
# held-out set 12
BATCH13="spi_anomaly_3pass_bf16_triton qubit_gate_lowtarget_fp32_triton cycler_channel_stats_fp16_triton
zone_occupancy_atomic_int32_triton gassmann_fluidsub_1warp_fp16_triton reproj_residual_gather_fp32_triton
d8_flow_length_trace_uint8_cuda fused_gate6_simt_fp32_cuda p2d_particle_diffusion_local_fp32_cuda
pitch_control_influence_bf16_cuda prism_gravity_tail_fp32_cuda zncc_stereo_patchregs_fp16_cuda"
# held-out set 13
BATCH14="xol_aggregate_cap_2pass_fp16_triton nnue_dense_bcast_bf16_triton fdtd_tmz_ez_update_fp32_triton
pruning_site_major_catprog_fp32_triton mppi_rollout_atomic_bf16_triton ricker_patches_seq_fp16_triton
va_gmdb_projection_predicated_fp32_cuda connect4_playouts_divergent_int8_cuda radome_fdtd1d_rowshared_fp32_cuda
fitch_parsimony_local_uint8_cuda lqr_riccati_few_systems_fp32_cuda maxent_suitability_bigsmem_int16_cuda"
# held-out set 14
BATCH15="socs_clip_bcast_fma_fp16_triton sn_sweep_diagonal_launches_fp32_triton boris_push_aos_record_fp32_triton
stem_loudness_3pass_bf16_triton j2_rk4_eclipse_fp32_triton pacing_landscape_chain_fp16_triton
mack_resist_rate_vec4_fp32_cuda xs_nuclide_cache_local_fp32_cuda pic_cubic_gather_cellregs_fp32_cuda
wavetable_voice_warpblocks_fp16_cuda conjunction_screen_tail_fp32_cuda auction_mc_modulo_bids_int32_cuda"
case "${1:-}" in
  batch1) CELLS=$BATCH1 ;;
  batch2) CELLS=$BATCH2 ;;
  batch3) CELLS=$BATCH3 ;;
  batch4) CELLS=$BATCH4 ;;  # held-out set 3
  batch5) CELLS=$BATCH5 ;;  # held-out set 4
  batch6) CELLS=$BATCH6 ;;  # held-out set 5
  batch7) CELLS=$BATCH7 ;;  # held-out set 6
  batch8) CELLS=$BATCH8 ;;  # held-out set 7
  batch9) CELLS=$BATCH9 ;;  # held-out set 8
  batch10) CELLS=$BATCH10 ;;  # held-out set 9
  batch11) CELLS=$BATCH11 ;;  # held-out set 10
  batch12) CELLS=$BATCH12 ;;  # held-out set 11
  batch13) CELLS=$BATCH13 ;;  # held-out set 12
  batch14) CELLS=$BATCH14 ;;  # held-out set 13
  batch15) CELLS=$BATCH15 ;;  # held-out set 14
  "") CELLS="$BATCH1 $BATCH2" ;;
  *) CELLS="$*" ;;
esac
CUDA_CELLS=""; OTHER_CELLS=""
for c in $CELLS; do
  if grep -q load_inline "$S/$c.py"; then CUDA_CELLS="$CUDA_CELLS $c"; else OTHER_CELLS="$OTHER_CELLS $c"; fi
done

python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/nvtx-*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
export NVCC_APPEND_FLAGS=-lineinfo TORCH_EXTENSIONS_DIR=$W/torch_extensions TORCH_CUDA_ARCH_LIST=9.0

echo "== versions, t=$(elapsed)s"
{
  date -u +"%Y-%m-%dT%H:%M:%SZ"
  nvidia-smi -L
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv
  ncu --version
  nvcc --version | tail -2
  python3 -c "import sys, torch, triton; print('python', sys.version.split()[0], '| torch', torch.__version__, 'cuda', torch.version.cuda, '| triton', triton.__version__)"
  python3 -c "import kernel_lab.builds as b; print('kernel_lab.builds.use_folder_for present:', hasattr(b, 'use_folder_for'))"
} 2>&1 | tee "$W/logs/versions.txt"

# kernel regex of each cell, from the manifest ("*" = every kernel in the profiled range)
python3 - "$W" <<'PY'
import sys, tomllib
m = tomllib.load(open("tests/data/suite/manifest.toml", "rb"))
with open(f"{sys.argv[1]}/kernels.txt", "w") as f:
    for k in m["kernel"]:
        f.write(f"{k['name']} {k['kernel']}\n")
from kernel_lab.profiling.sections import DEFAULT_SECTIONS, EXTRA_METRICS
open(f"{sys.argv[1]}/sections", "w").write(" ".join(f"--section {s}" for s in DEFAULT_SECTIONS))
open(f"{sys.argv[1]}/metrics", "w").write(",".join(EXTRA_METRICS))
PY
SECTIONS=$(cat "$W/sections"); METRICS=$(cat "$W/metrics")
echo "sections: $SECTIONS" > "$W/logs/collection.txt"; echo "metrics: $METRICS" >> "$W/logs/collection.txt"
kernel_of() { awk -v n="$1" '$1 == n {print $2}' "$W/kernels.txt"; }

LIMIT=${LIMIT:-590}          # seconds: everything must be packed by then (the device call's limit is 600)
RESERVE=${RESERVE:-70}       # seconds kept for the CUDA cells' checks and the final packing
run_ncu() {  # name
  local name=$1 k; k=$(kernel_of "$1")
  local t1; t1=$(date +%s)
  local left=$(( LIMIT - RESERVE - $(elapsed) ))
  if [ "$left" -lt 25 ]; then echo "NCU $name SKIPPED (time)" | tee -a "$W/logs/summary.txt"; return; fi
  [ "$left" -gt 120 ] && left=120
  if [ "$k" = "*" ]; then FILT=(-c 3); else FILT=(-c 1 -k "regex:^($k)(<.*)?$"); fi
  timeout "$left" ncu --clock-control none --import-source yes --nvtx --nvtx-include "kernel_lab@profile/" "${FILT[@]}" \
      $SECTIONS --metrics "$METRICS" -f -o "$W/reports/$name" \
      python3 -m kernel_lab.profiling.runner "$S/$name.py" > "$W/logs/$name.log" 2>&1
  local rc=$? size; size=$(stat -c %s "$W/reports/$name.ncu-rep" 2>/dev/null || echo none)
  echo "NCU $name rc=$rc wall=$(( $(date +%s) - t1 ))s size=$size t=$(elapsed)s | $(grep -E '==PROF== Profiling' "$W/logs/$name.log" | tr -d '\r' | sed 's/.*Profiling //' | tr '\n' ';' | cut -c1-200)" \
    | tee -a "$W/logs/summary.txt"
  [ -f "$W/reports/$name.ncu-rep" ] && python3 "$S/record_pack.py" add "$W/reports/$name.ncu-rep" "$DEST"  # into $OUT at once
}

echo "== correctness and timing of the Triton/torch cells (check_time.py; before the builds start, so the CPU is quiet), t=$(elapsed)s"
[ -n "$OTHER_CELLS" ] && timeout 200 python3 "$S/check_time.py" "$W/checks.json" $(for c in $OTHER_CELLS; do echo "$S/$c.py"; done) 2>&1 | tee "$W/logs/check.txt"

echo "== build the CUDA cells in the background (runner, no GPU visible), t=$(elapsed)s"
printf '%s\n' $CUDA_CELLS | xargs -P 10 -I{} sh -c \
  'CUDA_VISIBLE_DEVICES= MAX_JOBS=2 nice -n 10 python3 -m kernel_lab.profiling.runner '"$S"'/{}.py > '"$W"'/logs/build_{}.log 2>&1; echo "built {} rc=$? t=$(( $(date +%s) - '"$T0"' ))s"' \
  > "$W/logs/builds.txt" 2>&1 &
BUILD_PID=$!

echo "== ncu: Triton and torch cells (while the CUDA cells build), t=$(elapsed)s"
for c in $OTHER_CELLS; do run_ncu "$c"; done

echo "== ncu: CUDA cells, each as soon as its build is done, t=$(elapsed)s"
TODO=" $CUDA_CELLS "
while [ -n "${TODO// /}" ]; do
  next=""
  for c in $TODO; do
    if grep -q "^built $c " "$W/logs/builds.txt" 2>/dev/null; then next=$c; break; fi
  done
  if [ -z "$next" ]; then
    if ! kill -0 $BUILD_PID 2>/dev/null; then next=$(echo $TODO | awk '{print $1}'); else sleep 2; continue; fi
  fi
  run_ncu "$next"
  TODO=$(echo " $TODO " | sed "s/ $next / /")
done
wait $BUILD_PID
cat "$W/logs/builds.txt"

echo "== correctness and timing of the CUDA cells, t=$(elapsed)s"
left=$(( LIMIT - 15 - $(elapsed) ))
[ -n "$CUDA_CELLS" ] && [ "$left" -gt 10 ] && timeout "$left" python3 "$S/check_time.py" "$W/checks.json" $(for c in $CUDA_CELLS; do echo "$S/$c.py"; done) 2>&1 | tee -a "$W/logs/check.txt"
echo "checked, t=$(elapsed)s"

echo "== pack, t=$(elapsed)s"
python3 "$S/record_pack.py" finish "$W" "$DEST"
ls -la "$DEST"
echo "== summary"
cat "$W/logs/summary.txt"
grep -E "^CHECK" "$W/logs/check.txt" | awk '{print $2, $3}' | tr '\n' ';'; echo
echo "done, t=$(elapsed)s"
