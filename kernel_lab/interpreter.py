"""Triton's CPU interpreter (``TRITON_INTERPRET=1``), taught what real kernels use and it does not run.

:func:`install` is called by the processes that run cells without a GPU (the judge's and the screen's), before a
cell loads:

* ``libdevice`` functions (``triton.language.extra.libdevice`` and its ``cuda`` twin are stubs the compiler
  resolves; the interpreter calls them and gets None): computed elementwise with numpy, in the argument's dtype,
  however the kernel's module reached them (``libdevice.rsqrt``, ``from ... import rsqrt``, a module loaded anew);
* ``tl`` builtins a module binds to other names (``triton_cast = tl.cast``) run as the interpreter runs ``tl.cast``;
* a Python float argument becomes a float32 scalar, as the compiler types it (``eps.to(tl.float32)``);
* a ``tl.dtype`` passed as a constexpr answers ``.value``, as the compiler's ``tl.constexpr`` does;
* ``@triton.autotune`` takes its first configuration (left after pruning) without timing any: the interpreter's
  times say nothing of a GPU's, and its benchmarker needs a GPU driver;
* in a process that imported Triton before ``TRITON_INTERPRET=1`` was set, ``triton.language``'s own jit functions
  (``tl.sigmoid``, ``tl.softmax``, ``tl.cdiv``, ...) are made interpreted, as the kernels defined from then on are.

What it still cannot run gets one line (:func:`cannot_run`): the construct, and that the cell needs a GPU.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

#: libdevice function -> numpy (elementwise, in the first argument's dtype)
NUMPY: dict[str, Callable[..., Any]] = {
    **dict.fromkeys(("abs", "fabs"), np.abs),
    **{name: getattr(np, name) for name in ("floor", "ceil", "trunc", "exp", "exp2", "expm1", "log", "log2", "log10")},
    **{name: getattr(np, name) for name in ("log1p", "sqrt", "cbrt", "sin", "cos", "tan", "sinh", "cosh", "tanh")},
    **{name: getattr(np, name) for name in ("hypot", "copysign", "fmod", "fmax", "fmin")},
    **{"asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "atan2": np.arctan2, "asinh": np.arcsinh},
    **{"acosh": np.arccosh, "atanh": np.arctanh, "exp10": lambda x: np.power(10.0, x).astype(x.dtype)},
    **dict.fromkeys(("rint", "nearbyint"), np.rint),
    "round": lambda x: np.sign(x) * np.floor(np.abs(x) + 0.5),
    **dict.fromkeys(("rsqrt", "rsqrt_rn"), lambda x: 1 / np.sqrt(x)),
    **dict.fromkeys(("rcp_rn", "rcp_rz", "rcp_rd", "rcp_ru"), lambda x: 1 / x),
    **dict.fromkeys(("sqrt_rn", "sqrt_rz", "sqrt_rd", "sqrt_ru"), np.sqrt),
    **dict.fromkeys(("div_rn", "div_rz", "div_rd", "div_ru", "fast_dividef"), lambda x, y: x / y),
    **dict.fromkeys(("pow", "powf", "powi", "fast_powf"), np.power),
    **dict.fromkeys(("fma", "fma_rn", "fma_rz", "fma_rd", "fma_ru"), lambda x, y, z: x * y + z),
    **{"fast_expf": np.exp, "fast_logf": np.log, "fast_log2f": np.log2, "fast_log10f": np.log10},
    **{"fast_exp10f": lambda x: np.power(10.0, x).astype(x.dtype), "fast_sinf": np.sin, "fast_cosf": np.cos},
    **{"fast_tanf": np.tan, "fdim": lambda x, y: np.maximum(x - y, 0), "saturatef": lambda x: np.clip(x, 0, 1)},
    "erf": np.vectorize(math.erf),
    "erfc": np.vectorize(math.erfc),
    "lgamma": np.vectorize(math.lgamma),
    "tgamma": np.vectorize(math.gamma),
}
#: libdevice predicates -> numpy (elementwise, a boolean result)
PREDICATES: dict[str, Callable[..., Any]] = {
    "isnan": np.isnan,
    "isinf": np.isinf,
    "isfinited": np.isfinite,
    "finitef": np.isfinite,
    "signbit": np.signbit,
}
_installed = False


def _elementwise(fn: Callable[..., Any], predicate: bool = False) -> Callable[..., Any]:
    """A libdevice function of interpreted tensors, computed by ``fn`` on their numpy data."""

    def call(*args: Any, **_: Any) -> Any:
        import triton.language as tl
        from triton.runtime.interpreter import TensorHandle

        tensors = [a for a in args if isinstance(a, tl.tensor)]
        first = max(tensors, key=lambda t: t.handle.data.size)
        data = [a.handle.data if isinstance(a, tl.tensor) else a for a in args]
        with np.errstate(all="ignore"):
            out = np.asarray(fn(*data))
        scalar = tl.int1 if predicate else first.dtype.scalar
        out = out.astype(np.bool_ if predicate else first.handle.data.dtype)
        kind = tl.block_type(scalar, list(out.shape)) if first.type.is_block() else scalar
        return tl.tensor(TensorHandle(out, scalar), kind)

    return call


def _float_scalars() -> None:
    """Python float arguments as float32 scalars (the compiler's type for them), not bare floats."""
    import triton.language as tl
    from triton.runtime import interpreter
    from triton.runtime.interpreter import TensorHandle

    original = interpreter._implicit_cvt

    def convert(arg: Any) -> Any:
        if isinstance(arg, float):
            return tl.tensor(TensorHandle(np.array([arg], dtype=np.float32), tl.float32), tl.float32)
        return original(arg)

    interpreter._implicit_cvt = convert


class _Names:
    """A kernel's globals as attributes, so that the interpreter's patch scope sets and restores them."""

    def __init__(self, names: dict[str, Any]) -> None:
        object.__setattr__(self, "_names", names)

    def __getattr__(self, name: str) -> Any:
        try:
            return self._names[name]
        except KeyError:
            raise AttributeError(name) from None

    def __setattr__(self, name: str, value: Any) -> None:
        self._names[name] = value

    def __delattr__(self, name: str) -> None:
        del self._names[name]


def _libdevice(value: Any) -> bool:
    return str(getattr(value, "__module__", None) or getattr(value, "__name__", "")).startswith("triton.language.extra")


def _replacement(name: str) -> Callable[..., Any] | None:
    if name in NUMPY:
        return _elementwise(NUMPY[name])
    return _elementwise(PREDICATES[name], predicate=True) if name in PREDICATES else None


def _patch_names(fn: Any, scope: Any) -> None:
    """Within the interpreter's patch scope of ``fn``: its globals that are libdevice functions (or modules) and
    ``tl`` builtins under other names."""
    import triton.language as tl
    from triton.runtime import interpreter

    names = _Names(fn.__globals__)
    for name, value in list(fn.__globals__.items()):
        if isinstance(value, type(tl)) and _libdevice(value):
            for member in [m for m in (*NUMPY, *PREDICATES) if hasattr(value, m)]:
                scope.set_attr(value, member, _replacement(member))
        elif callable(value) and _libdevice(value) and (new := _replacement(getattr(value, "__name__", ""))):
            scope.set_attr(names, name, new)
        elif tl.core.is_builtin(value) and getattr(tl, name, None) is not value:
            interpreter._patch_attr(names, name, value, interpreter.interpreter_builder, scope)


def install() -> None:
    """Teach the interpreter what the module docstring lists (once per process)."""
    global _installed
    _interpret_language()
    if _installed:
        return
    _installed = True
    import triton.language as tl
    from triton.runtime import interpreter
    from triton.runtime.autotuner import Autotuner

    patch_lang = interpreter._patch_lang

    def patched(fn: Any) -> Any:
        scope = patch_lang(fn)
        _patch_names(fn, scope)
        return scope

    interpreter._patch_lang = patched
    if not hasattr(tl.dtype, "value"):
        tl.dtype.value = property(lambda self: self)
    _float_scalars()
    Autotuner._bench = lambda self, *args, config, **meta: [0.0]  # every one alike: the first is taken


def _interpret_language() -> None:
    """``triton.language``'s jit functions made when the interpreter was off, remade interpreted (if it is on now)."""
    import sys

    import triton
    import triton.language as tl
    from triton.runtime.interpreter import InterpretedFunction
    from triton.runtime.jit import JITFunction

    if not triton.knobs.runtime.interpret:
        return
    made: dict[int, InterpretedFunction[Any]] = {}
    for name, module in list(sys.modules.items()):
        if module is None or not (name == "triton.language" or name.startswith("triton.language.")):
            continue
        for attr, value in list(vars(module).items()):
            if isinstance(value, JITFunction):
                setattr(module, attr, made.setdefault(id(value), InterpretedFunction(value.fn)))
    for value in list(vars(tl.tensor).values()):  # tensor methods (x.sigmoid()) call the function they wrap
        for cell in getattr(value, "__closure__", None) or ():
            if isinstance(cell.cell_contents, JITFunction) and id(cell.cell_contents) in made:
                cell.cell_contents = made[id(cell.cell_contents)]


def cannot_run(exc: BaseException) -> str | None:
    """One line when ``exc`` is Triton's interpreter failing on a construct it cannot run, else None."""
    text = f"{type(exc).__name__}: {exc}"
    if "InterpreterError" not in text and "not supported in interpreter mode" not in text:
        return None
    said = " ".join(str(exc).split())[:200]
    return f"Triton's CPU interpreter cannot run this kernel ({said}): the cell needs a GPU"
