from kernel_lab.course.model import Diagnose, Fix, Lesson, Target, Version, Work

N = 2**24  # particles, 4 floats each

LESSON = Lesson(
    id="02_coalescing",
    title="Coalescing: strided and contiguous access, AoS to SoA",
    summary="Neighbouring threads should touch neighbouring addresses: see wasted sectors in the profile and fix the access order.",
    language="triton",
    versions=(
        Version("naive", "naive", "AoS -> SoA, one output element per lane: neighbouring lanes read 16 bytes apart",
                "Three quarters of every sector fetched are wasted, and each pass over a field reads the whole array again from DRAM."),
        Version("reference", "reference", "whole particles loaded as one contiguous tile, each field stored as a contiguous row",
                "Every byte fetched is used: DRAM moves what the problem needs, at the DRAM roof."),
        Version("attempt_field_loads", "attempt", "lanes walk particles, one load per field",
                "Half right: the four loads of a particle now hit the same sectors, so L1 saves most of the DRAM traffic, "
                "but each load instruction still fetches four times the sectors it uses."),
        Version("wrong_layout", "wrong", "the tile stored as loaded: the output stays particle-major"),
        Version("cheat_torch", "cheat", "aos.t().contiguous() in PyTorch: the kernel is never launched"),
    ),
    exercises=(
        Diagnose("diagnose", "naive", "uncoalesced_global",
                 "What limits the naive conversion? Name the kind, the line, and a metric that shows it.",
                 discussion="The share of wasted sectors is the conductor's evidence: derived__memory_l2_theoretical_"
                            "sectors_global_excessive over memory_l2_theoretical_sectors_global, the sectors fetched for "
                            "global memory that the lanes asking for them did not need."),
        Fix("fix", "naive", "reference", Target(roof="DRAM", fraction=0.85, gone=("uncoalesced_global",)),
            Work(2 * 4 * 4 * N, 0, "the array read once and written once: 2 x 16 bytes per particle"),
            "Make the conversion coalesced: at least 85% of the DRAM roof, no uncoalesced_global left."),
    ),
)
