from kernel_lab.course.model import Diagnose, Fix, Lesson, Target, Version, Work

M, N = 16384, 4096

LESSON = Lesson(
    id="09_optimize",
    title="%%optimize end to end",
    summary="Let the built-in optimizer (and an LLM) search and verify versions; see what a parameter search can and cannot fix.",
    language="triton",
    versions=(
        Version("naive", "naive", "layer normalization, 128-wide chunks, one warp per row, three passes over x",
                "Near the DRAM roof by the bytes it moves, but it moves x three times."),
        Version("attempt_params", "attempt", "what a launch-parameter search can do: 1024-wide chunks, 4 warps; still three passes",
                "Better parameters, the same three passes: parameters cannot remove traffic."),
        Version("reference", "reference", "the row loaded once into registers, 8 warps per row",
                "One read of x, one write of the result: the least traffic, near the DRAM roof."),
        Version("wrong_variance", "wrong", "the variance counts the masked-off columns"),
        Version("cheat_torch", "cheat", "torch.nn.functional.layer_norm: the kernel is never launched"),
    ),
    exercises=(
        Diagnose("diagnose", "naive", "memory_bound",
                 "What limits the naive layer norm? Name the kind and the metric that shows why a parameter search cannot fix it.",
                 ask_line=False,
                 discussion="DRAM runs near its peak: by the dashboard's measure the kernel is at the DRAM roof, and no "
                            "launch parameter moves bytes faster than DRAM delivers them. Only moving fewer bytes (one "
                            "pass over x instead of three) makes it faster."),
        Fix("fix", "naive", "reference", Target(roof="DRAM", fraction=0.8),
            Work(2 * 4 * M * N, 0, "x read once, the result written once: 2 x 4 bytes per element"),
            "Take the layer norm to at least 80% of the DRAM roof, with %%optimize's help or by hand."),
    ),
)
