from kernel_lab.course.model import Diagnose, Fix, Lesson, Target, Version, Work

S, H, D = 8192, 32, 128

LESSON = Lesson(
    id="10_capstone",
    title="Capstone: rotary position embedding",
    summary="RoPE as LLaMA applies it, from a first port to the DRAM roof: diagnose, fix, and be graded on the roofline.",
    language="triton",
    versions=(
        Version("naive", "naive", "one program per (token, head): 64 pairs, even and odd elements loaded 8 bytes apart",
                "Small programs, strided loads, cos and sin re-read for every head."),
        Version("attempt_per_token", "attempt", "one program per token (cos and sin reused by every head), still even/odd loads",
                "A trap: the 2-D tile of even/odd loads wastes most of every sector, slower than the naive version."),
        Version("reference", "reference", "one program per token: all heads as one contiguous tile, pairs split in registers",
                "Contiguous loads and stores, cos and sin once per token: near the DRAM roof."),
        Version("wrong_sign", "wrong", "rotates by -angle"),
        Version("cheat_torch", "cheat", "the rotation in PyTorch: the kernel is never launched"),
    ),
    exercises=(
        Diagnose("diagnose", "naive", "latency_bound",
                 "What does the conductor rank first for the naive RoPE? Kind, line, metric.",
                 discussion="Both of the conductor's first findings are real: small programs keep too few bytes in "
                            "flight (lessons 1 and 8), and the even/odd loads waste part of every sector (lesson 2). The "
                            "dashboard's ranking lists the rest; a good version answers all of them."),
        Fix("fix", "naive", "reference", Target(roof="DRAM", fraction=0.8),
            Work(2 * 4 * S * H * D + 2 * 4 * S * (D // 2), 3 * S * H * D,
                 "x read once, the result written once (4 bytes per element), cos and sin read once per token"),
            "Take RoPE as far toward the DRAM roof as you can: the score grows with the share of the roof, full marks at 80%.",
            graded_by_roof=True),
    ),
)
