from kernel_lab.course.model import Diagnose, Fix, Lesson, Target, Version, Work

S = 8192  # the matrix is S x S floats

LESSON = Lesson(
    id="03_bank_conflicts",
    title="Shared-memory bank conflicts",
    summary="32 banks, 4 bytes wide: read a tile by columns and a warp queues on one bank; pad or swizzle it (CUDA transpose).",
    language="cuda",
    versions=(
        Version("naive", "naive", "transpose through a 32 x 32 tile read back by columns",
                "A column of a 32 x 32 float tile lies in one bank: each read of it takes 32 passes."),
        Version("reference", "reference", "the same transpose with the tile padded to 32 x 33",
                "One column of padding shifts each row by one bank, so a column spans all 32 banks: no conflicts left."),
        Version("attempt_pad2", "attempt", "the tile padded by two columns (32 x 34)",
                "Half right: a column now spans 16 banks, two addresses in each: 2-way conflicts remain."),
        Version("example_swizzle", "example", "no padding: the column index XOR the row (a swizzle)",
                "Swizzling spreads a column over all 32 banks without wasting shared memory."),
        Version("wrong_not_transposed", "wrong", "padded, but the tile is read by rows: each block is copied, not transposed"),
        Version("cheat_torch", "cheat", "the C++ function copies PyTorch's transpose: the kernel is never launched"),
    ),
    exercises=(
        Diagnose("diagnose", "naive", "shared_bank_conflicts",
                 "What limits the naive transpose? Name the kind, the line, and a metric that shows it.",
                 discussion="Without conflicts each shared-memory access takes one wavefront (pass); the conductor counts "
                            "the replays the conflicts cause (l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld and _st) "
                            "against all wavefronts. Meanwhile DRAM is far from its peak: the conflicts, not memory, set "
                            "the pace."),
        Fix("fix", "naive", "reference", Target(roof="DRAM", fraction=0.45, speedup=1.5, gone=("shared_bank_conflicts",)),
            Work(2 * 4 * S * S, 0, "the matrix read once and written once: 2 x 4 bytes per element"),
            "Remove the bank conflicts: no shared_bank_conflicts left, at least 1.5x faster, at least 45% of the DRAM roof."),
    ),
)
