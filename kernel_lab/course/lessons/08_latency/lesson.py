from kernel_lab.course.model import Diagnose, Fix, Lesson, Target, Version, Work

M, K = 16384, 4096

LESSON = Lesson(
    id="08_latency",
    title="Latency hiding: bytes in flight",
    summary="Little's law: to run at the DRAM roof, an SM must keep bandwidth x latency bytes in flight; num_stages, wide loads, no waits.",
    language="triton",
    versions=(
        Version("naive", "naive", "matrix-vector product, 128-wide steps, a full reduction in every step",
                "Each thread has one 4-byte load in flight per step, then waits for the whole program's reduction."),
        Version("reference", "reference", "1024-wide steps, a running vector of products, one reduction at the end",
                "Eight floats per thread per step, no reduction inside the loop: DRAM near its roof."),
        Version("attempt_stages", "attempt", "the naive kernel with num_stages=4",
                "No change: Triton pipelines loads that feed tl.dot; this loop's loads go straight to registers."),
        Version("example_wide", "example", "1024-wide steps, still a full reduction in every step",
                "Wide steps alone already put enough bytes in flight: the reduction per step is then cheap enough."),
        Version("wrong_x_offset", "wrong", "x loaded at the row's offset instead of the column's"),
        Version("cheat_torch", "cheat", "torch.mv (cuBLAS): the kernel is never launched"),
    ),
    exercises=(
        Diagnose("diagnose", "naive", "memory_bound",
                 "What does the conductor rank first for the naive product, and which unit is busiest? Kind and metric.",
                 ask_line=False,
                 discussion="Memory-bound, but the busiest unit is L1/shared memory (the reduction in every step goes "
                            "through shared memory), while DRAM is far from its peak: too few bytes are in flight to "
                            "keep it busy, which Little's law puts a number on."),
        Fix("fix", "naive", "reference", Target(roof="DRAM", fraction=0.8),
            Work(4 * M * K + 4 * K + 4 * M, 2 * M * K, "A read once, x read once, y written once (4 bytes each)"),
            "Keep enough bytes in flight: at least 80% of the DRAM roof."),
    ),
)
