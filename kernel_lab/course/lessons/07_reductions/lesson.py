from kernel_lab.course.model import Diagnose, Fix, Lesson, Target, Version, Work

R, C = 64, 2**21

LESSON = Lesson(
    id="07_reductions",
    title="Reductions and parallelism",
    summary="A reduction with one program per row leaves most SMs idle: split it, then add the partial sums (second pass or atomics).",
    language="triton",
    versions=(
        Version("naive", "naive", "row sums, one program per row: 64 programs for 132 SMs",
                "Half the SMs have nothing to do, and the busy ones cannot keep enough loads in flight."),
        Version("reference", "reference", "each row split into 64 chunks (4096 programs), then a second kernel adds the partial sums",
                "Every SM busy, DRAM near its roof; the second pass costs a few microseconds."),
        Version("attempt_split2", "attempt", "the rows split in two: 128 programs",
                "Half right: every SM but a few gets one program, but one program per SM is too little to saturate DRAM."),
        Version("example_atomics", "example", "the same split, the partial sums added with atomics",
                "One kernel instead of two; the order of the additions changes from run to run (floating-point sums differ in the last bits)."),
        Version("wrong_chunk", "wrong", "chunks of C // SPLIT columns: the last columns are dropped and chunks overlap"),
        Version("cheat_torch", "cheat", "x.sum(dim=1) in PyTorch: the kernel is never launched"),
    ),
    exercises=(
        Diagnose("diagnose", "naive", "small_grid",
                 "What limits the naive row sums? Name the kind and a metric that shows it.", ask_line=False,
                 discussion="One program per row is fewer programs than SMs: the SMs without one idle for the whole "
                            "kernel, and the busy ones run a single program each, with low occupancy and DRAM far from "
                            "its peak."),
        Fix("fix", "naive", "reference", Target(roof="DRAM", fraction=0.8, gone=("small_grid",)),
            Work(4 * R * C + 4 * R, R * C, "x read once (4 bytes per element), one float per row written"),
            "Give every SM work: at least 80% of the DRAM roof, no small_grid left."),
    ),
)
