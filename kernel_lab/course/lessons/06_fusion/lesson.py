from kernel_lab.course.model import Diagnose, Estimate, Fix, Lesson, Target, Version, Work

M, N = 8192, 4096

LESSON = Lesson(
    id="06_fusion",
    title="Fusion: fewer bytes",
    summary="Each kernel at the DRAM roof and the whole still slow: count the bytes by hand, fuse the passes, measure again.",
    language="triton",
    versions=(
        Version("naive", "naive", "softmax in three kernels: row max; exp and row sum; divide",
                "Every kernel runs near the DRAM roof, yet x is read twice and the exponentials go to DRAM and back."),
        Version("reference", "reference", "one fused kernel: each row read once, kept in registers, written once",
                "The least traffic the problem allows, near the DRAM roof."),
        Version("attempt_two_kernels", "attempt", "max and sum fused, the division in a second kernel that reads x again",
                "Half right: the exponentials no longer go through DRAM, but x is still read twice."),
        Version("wrong_mask", "wrong", "fused, but masked-off columns load as 0 instead of -inf and join the sum"),
        Version("cheat_torch", "cheat", "torch.softmax: the kernel is never launched"),
    ),
    exercises=(
        Diagnose("diagnose", "naive", "memory_bound",
                 "What limits the unfused softmax's kernels? Name the kind and a metric that shows it.", ask_line=False,
                 discussion="Each kernel runs near the DRAM roof by the dashboard's measure, and the conductor rightly "
                            "says memory_bound for each. The waste is not inside any kernel; it is between them, and "
                            "the dashboard's first line, which reads the whole cell, says so: x is read by two kernels "
                            "and the exponentials are written and read back, bytes one fused kernel would not move."),
        Estimate("bytes", "naive", "dram_bytes",
                 "How many bytes do the three kernels move to and from DRAM together? Count by hand (x is 8192 x 4096 floats).",
                 discussion="The measured bytes come out a little under a count by hand: writes still sitting in the L2 "
                            "cache when a kernel ends are not yet counted as DRAM traffic."),
        Fix("fix", "naive", "reference", Target(roof="DRAM", fraction=0.85),
            Work(2 * 4 * M * N, 4 * M * N, "x read once, the result written once: 2 x 4 bytes per element"),
            "Fuse the softmax: at least 85% of the DRAM roof, counting only the bytes the problem needs."),
    ),
)
