"""How the judge compares a candidate's outputs with the reference's (in the trusted parent).

Two checks per output:

1. **Against the reference's own output**, with the dtype's tolerance: ``max |out - ref| <= atol + rtol *
   max |ref|`` over the finite elements (a norm-wise measure, robust to cancellation in sums where single
   elements near zero have large relative errors); NaN and inf must sit where the reference has them.
2. **Against the truth**, when the reference also ran on its inputs upcast to float64 (or float32 for
   half-precision outputs): the candidate's error from that truth may be at most 4x the reference's own
   error, or a few units in the last place of the output dtype at the largest value, whichever is larger. So
   a candidate that computes in a lower precision than the reference (bf16 arithmetic for an fp16 kernel,
   TF32 for an fp32 one) fails even where the first check's tolerance would let it through. The few units
   (``TRUTH_FLOOR_ULPS``) are an eighth of the next lower precision's unit, at most 16: an honest float32
   kernel that sums in another order may be a couple of units off where the reference was exact, while TF32
   is 8192 units coarse; bfloat16 is only 8 units of float16, so float16 keeps a floor of one.

Default (rtol, atol) by dtype: float64 (1e-7, 1e-9), float32 (1e-4, 1e-5), float16 (1e-2, 1e-2),
bfloat16 (2e-2, 1e-2); float32 outputs of a reference that multiplies in TF32 (1e-2, 1e-2); 8-bit floats
(1e-1, 1e-1); other dtypes exactly.
"""

from __future__ import annotations

import math
import re
from typing import Any, NamedTuple

import torch

TOLERANCES: dict[torch.dtype, tuple[float, float]] = {
    torch.float64: (1e-7, 1e-9),
    torch.float32: (1e-4, 1e-5),
    torch.float16: (1e-2, 1e-2),
    torch.bfloat16: (2e-2, 1e-2),
}
TF32_TOLERANCE = (1e-2, 1e-2)
FP8_TOLERANCE = (1e-1, 1e-1)
TRUTH_FACTOR = 4.0  # a candidate may be this many times further from the truth than the reference
TRUTH_FLOOR_ULPS = {torch.float64: 16, torch.float32: 16, torch.float16: 1, torch.bfloat16: 2}
_TF32 = re.compile(r"allow_tf32\s*=\s*True|set_float32_matmul_precision\(\s*['\"](high|medium)")

Errors = tuple[float, float]  # (max abs error, max rel error)


class Problem(NamedTuple):
    """What is wrong with an output: its failure kind (:data:`kernel_lab.verify.findings.FAILURES`) and in words."""

    kind: str
    text: str

    def __str__(self) -> str:
        return self.text


def uses_tf32(source: str) -> bool:
    """Whether a cell multiplies float32 in TF32: Triton's ``tl.dot`` (unless "ieee") or torch's TF32 switches."""
    return ("tl.dot(" in source and "ieee" not in source) or bool(_TF32.search(source))


def tolerance(dtype: torch.dtype, tf32: bool, rtol: float | None, atol: float | None) -> tuple[float, float]:
    """(rtol, atol) for an output of ``dtype``; explicit values win."""
    if dtype == torch.float32 and tf32:
        default = TF32_TOLERANCE
    elif dtype.is_floating_point:
        default = TOLERANCES.get(dtype, FP8_TOLERANCE)
    else:
        default = (0.0, 0.0)
    return (default[0] if rtol is None else rtol, default[1] if atol is None else atol)


def _index(mask: torch.Tensor) -> list[int]:
    return torch.nonzero(mask)[0].tolist()


def _real(t: torch.Tensor) -> torch.Tensor:
    return _parts(t).double()


def _parts(t: torch.Tensor) -> torch.Tensor:
    """A complex tensor as its real and imaginary parts; any other as it is."""
    return torch.view_as_real(t) if t.is_complex() else t


def _max_abs(t: torch.Tensor) -> float:
    """max |t| in one pass: NaN when ``t`` holds a NaN, inf when an inf; 0 when empty."""
    return float(torch.linalg.vector_norm(t, math.inf)) if t.numel() else 0.0


def _passes(got: torch.Tensor, want: torch.Tensor, rtol: float, atol: float) -> Errors | None:
    """:func:`compare`'s errors when every value on both sides is finite and within the tolerance (or equal,
    for exact dtypes), found in three passes over the data instead of a dozen; None when the full comparison
    must say what is wrong (it gives the same numbers)."""
    if not (got.dtype.is_floating_point or got.is_complex()):
        return (0.0, 0.0) if torch.equal(got, want) else None
    w = _parts(want)
    scale = _max_abs(w)  # exact in w's own dtype: the largest magnitude is one of its values
    max_abs = _max_abs(_parts(got).to(torch.float64, copy=True).sub_(w))  # float64: exact for narrower dtypes
    if not (math.isfinite(scale) and math.isfinite(max_abs)) or max_abs > atol + rtol * scale:
        return None
    return max_abs, max_abs / scale if scale else (0.0 if max_abs == 0 else math.inf)


def compare(got: torch.Tensor, want: torch.Tensor, rtol: float, atol: float) -> tuple[Problem | None, Errors | None]:
    """(what is wrong or None, (max abs error, max rel error)) of one output against the reference's.

    The errors are None where they are not defined (another shape or dtype, NaN or inf mismatch).
    """
    if got.shape != want.shape:
        return Problem("wrong_shape", f"has shape {tuple(got.shape)} but the reference's has shape {tuple(want.shape)}"), None
    if got.dtype != want.dtype:
        said = f"has dtype {got.dtype} but the reference's has {want.dtype}: keep the precision the reference declares"
        return Problem("wrong_shape", said), None
    if (passed := _passes(got, want, rtol, atol)) is not None:
        return None, passed
    g, w = _real(got), _real(want)
    if (bad := g.isnan() & ~w.isnan()).any():
        said = (
            f"has {int(bad.sum())} NaN values where the reference has numbers (first at index {_index(bad)}): "
            "elements left unwritten, or invalid math"
        )
        return Problem("nan_mismatch", said), None
    if (bad := w.isnan() & ~g.isnan()).any():
        return Problem("nan_mismatch", f"has numbers where the reference has NaN (first at index {_index(bad)})"), None
    if (bad := (g.isinf() | w.isinf()) & (g != w)).any():
        i = tuple(_index(bad))
        said = f"has infinite values unlike the reference (index {list(i)}: {g[i]:g} instead of {w[i]:g})"
        return Problem("nan_mismatch", said), None
    finite = w.isfinite()
    diff = (g - w).abs().where(finite, 0.0)
    max_abs = float(diff.max()) if diff.numel() else 0.0
    scale = float(w.abs().where(finite, 0.0).max()) if w.numel() else 0.0
    errors = (max_abs, max_abs / scale if scale else (0.0 if max_abs == 0 else math.inf))
    allowed = atol + rtol * scale
    if max_abs > allowed:
        i = tuple(_index(diff == max_abs))
        problem = (
            f"differs from the reference by up to {max_abs:.3g} (index {list(i)}: {g[i]:.6g} instead of "
            f"{w[i]:.6g}), more than the tolerance {allowed:.3g} = atol {atol:g} + rtol {rtol:g} × max|reference| "
            f"{scale:.3g}"
        )
        return Problem("wrong_values", problem), errors
    return None, errors


def against_truth(got: torch.Tensor, want: torch.Tensor, truth: torch.Tensor) -> str | None:
    """What is wrong when the candidate is much further from the upcast truth than the reference, else None."""
    if got.shape != truth.shape or not got.dtype.is_floating_point:
        return None
    t = _real(truth)
    found = _all_finite(got, want, t) or _where_finite(got, want, t)
    if found is None:
        return None
    scale, ref, cand = found
    floor = TRUTH_FLOOR_ULPS.get(got.dtype, 1) * torch.finfo(got.dtype).eps * scale
    allowed = max(TRUTH_FACTOR * ref, floor)
    if cand > allowed:
        return (
            f"is {cand:.3g} away from the result computed in higher precision, {cand / max(ref, 1e-300):.1f}× the "
            f"reference's own error ({ref:.3g}): it computes in a lower precision than the reference "
            f"({got.dtype} output)"
        )
    return None


def _all_finite(got: torch.Tensor, want: torch.Tensor, t: torch.Tensor) -> tuple[float, float, float] | None:
    """(max |truth|, the reference's and the candidate's largest error from it) when all three are finite
    everywhere (the usual case: three passes, the differences made in float64), else None."""
    found = _max_abs(t), _max_abs(t - _parts(want)), _max_abs(t - _parts(got))
    return found if t.numel() and all(math.isfinite(x) for x in found) else None


def _where_finite(got: torch.Tensor, want: torch.Tensor, t: torch.Tensor) -> tuple[float, float, float] | None:
    """:func:`_all_finite`'s three numbers over the elements where the truth and the reference are finite;
    None when there are none."""
    w = _real(want)
    finite = t.isfinite() & w.isfinite()
    if not finite.any():
        return None
    return float(t.abs()[finite].max()), float((w - t).abs()[finite].max()), float((_real(got) - t).abs()[finite].max())


def near_constant(t: torch.Tensor) -> bool:
    """Whether the finite values of ``t`` barely vary (std <= 1e-6 max|t|, e.g. all zeros)."""
    v = _real(t).flatten()
    v = v[v.isfinite()]
    return v.numel() < 2 or bool(v.std() <= 1e-6 * v.abs().max())


def finite(tensors: list[Any]) -> bool:
    """Whether every floating-point tensor holds only finite values."""
    return all(bool(_real(t).isfinite().all()) for t in tensors if t.is_floating_point() or t.is_complex())
