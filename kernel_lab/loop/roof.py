"""What a profile says about where a version stands: its bottlenecks ranked, how near its roof it is, and whether a
version that changes only launch parameters needs a profile of its own before the next round."""

from __future__ import annotations

from kernel_lab import metrics as M
from kernel_lab.analysis import conductor
from kernel_lab.analysis.roofline import phrase, roofline
from kernel_lab.models import Bottleneck, Kernel, Profile
from kernel_lab.rewrite.launch import parameter_only
from kernel_lab.session import Version

NEAR_ROOF = 0.9  # stop when the top kernel reaches this fraction of the roof that bounds it
#: top bottlenecks that leave a kernel at its roof with much to gain: the bytes the roof counts include the sectors
#: uncoalesced reads waste (a naive transpose at 92% of DRAM's), the FP32 roof is not the tensor cores', and a
#: kernel at its roof may move what a fused cell would not
PAST_THE_ROOF = frozenset({"uncoalesced_global", "tensor_cores_unused", "fusion"})
SAME_SIZE = 0.9  # a version the judge timed under this share of its profiled kernel time ran another size


def ranked(profile: Profile) -> list[tuple[str, Bottleneck]]:
    """(kernel name, bottleneck) of every launch, the costliest first: a score (the share of its launch's time) weighed
    by that launch's share of the cell's time in kernels. Unweighed, vLLM's decode attention's 7 µs reduction (0.31)
    came before the 239 µs kernel beside it (0.16), and the search tuned the reduction (H200)."""
    diagnoses = conductor.diagnose(profile)
    total = sum(d.kernel.get(M.DURATION) or 0.0 for d in diagnoses)
    found = [(d, b) for d in diagnoses for b in d.bottlenecks]
    found.sort(key=lambda db: -db[1].score * ((db[0].kernel.get(M.DURATION) or 0.0) / total if total > 0 else 1.0))
    return [(d.kernel.name, b) for d, b in found]


def _launches(profile: Profile, kernel: str) -> list[Kernel]:
    """The kernel's launches in the profile (its first launch when none has that name)."""
    return [k for k in profile.kernels if k.name == kernel] or list(profile.kernels[:1])


def reached(profile: Profile, kernel: str) -> tuple[float, str] | None:
    """(fraction, roof) reached by the kernel's costliest launch in the profile, if its roofline says."""
    launches = _launches(profile, kernel)
    if not launches:
        return None
    return roofline(max(launches, key=lambda k: k.get(M.DURATION) or 0)).reached()


def near_roof(profile: Profile, kernel: str, top: str = "") -> str | None:
    """'93% of the DRAM roof (DRAM bytes moved)' when the kernel (its costliest launch) is within reach of its roof, else
    None; None too when its top bottleneck ``top`` is one a kernel at that roof still has (:data:`PAST_THE_ROOF`)."""
    if top in PAST_THE_ROOF:
        return None
    where = reached(profile, kernel)
    return phrase(*where).removeprefix("at ") if where and where[0] >= NEAR_ROOF else None


def placed(profile: Profile, kernel: str, profiled: Version, current: Version) -> tuple[float, str] | None:
    """(the estimated share of its roof, how it was estimated and where that puts it) of ``current`` when it changes only launch
    parameters of ``profiled`` (whose profile this is: the same code, so the same work and much the same traffic)
    and the judge timed it; else None.

    The estimate takes the time the judge saw saved per call off the kernel's profiled duration: the judge's times
    also hold what a call costs besides the kernel, which a ratio of those times would count as the kernel's, and
    so read too low. Where the judge's times cannot be the profiled kernel's (the profiled version ran faster than
    its kernel under ncu, or more time was saved than the kernel took: another size), their ratio serves, as a
    lower bound."""
    before = 1.0 if profiled.number == 0 else profiled.speedup
    where = reached(profile, kernel)
    kernel_ms = sum(k.get(M.DURATION) or 0.0 for k in _launches(profile, kernel)) / 1e6
    if (
        where is None
        or not before
        or not current.time_ms
        or not current.reference_ms
        or not kernel_ms
        or not parameter_only(profiled.source, current.source)
    ):
        return None
    was_ms = current.reference_ms / before  # the profiled version's time in the judge's run of ``current``
    saved_ms, gain = was_ms - current.time_ms, was_ms / current.time_ms
    roof = where[1]
    if kernel_ms * SAME_SIZE <= was_ms and saved_ms < kernel_ms:
        estimate = where[0] * kernel_ms / (kernel_ms - saved_ms)
        how = f"{saved_ms:.3f} ms faster per call: {profiled.label}'s {kernel_ms:.3f} ms kernel then at"
        said = f"about {estimate:.0%} of the {roof} roof"
    else:  # the judge's times are not those of the profiled kernel (another size): their ratio, a lower bound
        estimate = where[0] * gain
        how = f"at {gain:.2f}x {profiled.label}'s speed (timed on another size than profiled),"
        said = f"{estimate:.0%} or more of the {roof} roof"
    return estimate, f"{how} {said if estimate < 1 else f'the {roof} roof or past it by that profile'}"


def carried(profile: Profile, kernel: str, profiled: Version, current: Version) -> str | None:
    """Why ``current`` need not be profiled before the next round, or None when it must be: it changes only launch
    parameters of ``profiled`` and the judge timed it (:func:`placed` says where that puts it). The search's next
    screen measures what it needs; the best version's profile at the end reads its roof."""
    where = placed(profile, kernel, profiled, current)
    if where is None:
        return None
    return (
        f"{current.label} not profiled (only launch parameters changed since {profiled.label}): {where[1]};"
        f" the search goes on from {profiled.label}'s diagnosis"
    )


def roof_note(profile: Profile, kernel: str, version: Version) -> str | None:
    """Where the best version's own profile puts it on its roof, in words (the stop message ends with it)."""
    where = reached(profile, kernel)
    if where is None:
        return None
    room = ": little is left to gain" if where[0] >= NEAR_ROOF else ""
    return f"{version.label} runs {phrase(*where)} by its profile{room}"
