"""Small formatting helpers for hint text."""

from __future__ import annotations


def nbytes(n: float) -> str:
    """1536 -> '1.5 KB' (decimal units, as Nsight Compute prints them)."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if abs(n) >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n:.0f} B"


def rate(n: float) -> str:
    """Bytes per second -> '2.88 TB/s'."""
    for unit, scale in (("TB/s", 1e12), ("GB/s", 1e9), ("MB/s", 1e6)):
        if n >= scale:
            return f"{n / scale:.2f} {unit}"
    return f"{n:.0f} B/s"


def count(n: float) -> str:
    """14680064 -> '14.7 M'."""
    for unit, scale in (("G", 1e9), ("M", 1e6), ("K", 1e3)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n:.0f}"
