from kernel_lab.course.model import Diagnose, Fix, Lesson, Target, Version, Work

N = 2**25  # elements of the add (on the GPU)
S = 4096  # matrix size of the GEMM example

LESSON = Lesson(
    id="01_roofline",
    title="Reading a profile and the roofline",
    summary="Memory-bound, compute-bound or latency-bound: read it from the SM and memory throughput, place the kernel under its roof.",
    language="triton",
    versions=(
        Version("example_axpy", "example", "out = a * x + y, 1024 elements per program",
                "DRAM near its peak, the SMs nearly idle: a memory-bound kernel.",
                work=Work(3 * 4 * N, 2 * N, "x and y read once, out written once: 3 x 4 bytes per element")),
        Version("example_gemm", "example", "a float16 matrix multiply with tl.dot, 4096 x 4096 x 4096",
                "The SMs (tensor cores) busier than memory: a compute-bound kernel.",
                work=Work(2 * 2 * S * S + 4 * S * S, 2 * S**3, "2 x 4096^3 FLOPs; A and B read once (2 bytes), C written once (4 bytes)"),
                roof="Tensor BF16/FP16"),
        Version("naive", "naive", "vector add, 64 elements per program",
                "Neither the SMs nor memory are busy: too few bytes in flight to cover DRAM latency."),
        Version("example_block256", "example", "the add with 256 elements per program",
                "Already enough bytes in flight: at the DRAM roof."),
        Version("reference", "reference", "the add with 2048 elements per program and 8 warps",
                "Each program moves 2048 elements; enough loads are in flight to keep DRAM busy, and the add sits at "
                "the DRAM roof: no launch configuration takes it further, only moving fewer bytes would."),
        Version("wrong_grid", "wrong", "bigger blocks, but the grid still counts n // 2048 programs: the tail is never written"),
        Version("cheat_torch", "cheat", "x + y in PyTorch: the kernel is never launched"),
    ),
    exercises=(
        Diagnose("axpy", "example_axpy", "memory_bound",
                 "What limits out = a * x + y? Name the kind and a metric that shows it.", ask_line=False,
                 discussion="It sits at its roof: tuning launch parameters cannot take it any further, since it moves "
                            "bytes as fast as DRAM delivers them. Knowing when to stop is half of optimization."),
        Diagnose("gemm", "example_gemm", "compute_bound",
                 "What limits the matrix multiply? Name the kind and a metric that shows it.", ask_line=False,
                 discussion="It sits under the flat roof of the tensor cores: only less or cheaper work (a lower "
                            "precision) would make it faster, not moving fewer bytes."),
        Diagnose("diagnose", "naive", "latency_bound",
                 "Why is the naive add far from its roof? Name the kind, the line where warps wait, and a metric.",
                 discussion="The warps' stall samples pile up on the tl.store line: that is where x + y first needs the "
                            "loaded values, so that is where the warps wait for DRAM. Why so long? A load from DRAM takes "
                            "hundreds of nanoseconds to come back. To keep DRAM busy, each SM must have many bytes requested "
                            "and not yet returned, all the time (lesson 8 puts a number on it: Little's law). With 64 "
                            "elements per program, a program loads two small vectors, waits, stores, and ends; the SM keeps "
                            "starting tiny programs, and too few bytes are ever in flight."),
        Fix("fix", "naive", "reference", Target(roof="DRAM", fraction=0.8, gone=("latency_bound",)),
            Work(3 * 4 * N, N, "x and y read once, out written once: 3 x 4 bytes per element; one addition"),
            "Make the add reach at least 80% of the DRAM roof."),
    ),
)
