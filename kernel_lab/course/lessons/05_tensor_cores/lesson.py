from kernel_lab.course.model import Diagnose, Fix, Lesson, Target, Version, Work

S = 4096
WORK = Work(2 * 2 * S * S + 4 * S * S, 2 * S**3, "2 x 4096^3 FLOPs; A and B read once (2 bytes each), C written once (4 bytes)")

LESSON = Lesson(
    id="05_tensor_cores",
    title="Tiling and tensor cores",
    summary="Reuse each loaded element many times (tiles), and let the tensor cores do the tile product (tl.dot).",
    language="triton",
    versions=(
        Version("example_rank1", "example", "64 x 64 tiles updated one k at a time with scalar multiply-adds (FMA units)",
                "The SMs are busy, but with index arithmetic and conversions more than with FLOPs: far under any roof."),
        Version("naive", "naive", "32 x 32 tiles, 8 deep; the tile product written as a broadcast multiply and a sum",
                "Triton turns the multiply-and-sum into a small tensor-core product, but tiles this small are re-read from "
                "L1 over and over, and 8 half-precision values per row fill only half of each 32-byte sector."),
        Version("attempt_small_tiles", "attempt", "tl.dot on 16 x 16 x 16 tiles with one warp",
                "Half right: tensor cores, but each tile is reused too little: L2 runs at its peak feeding them."),
        Version("reference", "reference", "tl.dot on 128 x 256 tiles, 64 deep, 8 warps, 3 stages",
                "Big tiles: each loaded element is used hundreds of times, the tensor cores set the pace."),
        Version("wrong_k_tail", "wrong", "the K loop stops at the last full block: the rest of K is never added"),
        Version("cheat_torch", "cheat", "torch.matmul (cuBLAS): the kernel is never launched"),
    ),
    exercises=(
        Diagnose("fma", "example_rank1", "compute_bound",
                 "What limits the FMA version? Name the kind and a metric that shows it.", ask_line=False,
                 discussion="The SMs are busy with instructions, but few of them are FLOPs: the busiest pipeline is "
                            "the ALU (integer and logic operations: index arithmetic), not the tensor cores."),
        Diagnose("diagnose", "naive", "memory_bound",
                 "What does the conductor rank first for the naive tiled kernel? Kind and metric.", ask_line=False,
                 discussion="Re-read from L1 again and again, the tiles make L1 the busiest unit. The "
                            "conductor's next findings are close behind: low occupancy (so close that it calls the two a "
                            "tie), and half-used sectors (8 float16 values per row are 16 bytes: half a sector). Bigger "
                            "tiles answer all three."),
        Fix("fix", "naive", "reference", Target(roof="Tensor BF16/FP16", fraction=0.6, speedup=8.0), WORK,
            "Use the tensor cores with tiles big enough: at least 60% of the tensor-core roof and 8x faster.",
            plausible_speedup=40.0),
    ),
)
