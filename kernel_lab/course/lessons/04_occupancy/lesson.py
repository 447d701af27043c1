from kernel_lab.course.model import Diagnose, Fix, Lesson, Target, Version, Work

WALKS = 132 * 64 * 2

LESSON = Lesson(
    id="04_occupancy",
    title="Occupancy: registers, shared memory, block size",
    summary="Warps hide latency only if enough of them fit on an SM: find the limiter, then free registers (CUDA, __launch_bounds__).",
    language="cuda",
    versions=(
        Version("naive", "naive", "linked-list walks; the unrolled loop keeps one partial sum per step in registers",
                "168 registers per thread: three blocks fit on an SM, and the few warps there spend their time waiting on memory."),
        Version("reference", "reference", "one running sum per thread",
                "The dependency is the walk, not the sum: one accumulator does, registers drop, every warp slot fills."),
        Version("attempt_launch_bounds", "attempt", "__launch_bounds__(128, 16) on the naive kernel",
                "Half right: the compiler must fit 32 registers, so occupancy is full, but the 128 partial sums spill to local memory."),
        Version("attempt_block256", "attempt", "256 threads per block",
                "The wrong lever: registers still limit the SM, now to a single bigger block: fewer warps than before."),
        Version("wrong_start", "wrong", "every walk starts at node 0"),
        Version("cheat_torch", "cheat", "the walks in PyTorch, one gather per step: the kernel is never launched"),
    ),
    exercises=(
        Diagnose("diagnose", "naive", "low_occupancy",
                 "What limits the naive walk? Name the kind, what limits the occupancy, and a metric that shows it.",
                 ask_line=False, ask_limiter=True,
                 discussion="Nsight Compute's occupancy calculator says how many blocks each resource lets an SM hold "
                            "(launch__occupancy_limit_registers, _shared_mem, _warps and _blocks); the smallest of them is "
                            "the limiter and sets the theoretical occupancy."),
        Fix("fix", "naive", "reference",
            Target(roof="DRAM", fraction=None, speedup=3.0, occupancy=80, gone=("low_occupancy", "register_spills")),
            Work(WALKS * (256 * 32 + 32 * 4 + 4), 0, "each of a walk's 256 steps reads one 32-byte sector; 32 floats out, one start in"),
            "Raise the occupancy without spilling: at least 80% achieved occupancy and 3x faster, no low_occupancy or register_spills."),
    ),
)
