"""Kernel Lab: profiling-guided GPU kernel optimization in Jupyter.

``import kernel_lab`` imports no torch or triton and runs no ncu; everything is loaded on use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__all__ = [
    "analyze",
    "compare",
    "diagnose",
    "lift",
    "load_ipython_extension",
    "optimize",
    "optimize_suite",
    "profile",
    "put_back",
]
__version__ = "0.1.0"

if TYPE_CHECKING:
    from kernel_lab.api import analyze, compare, diagnose, lift, optimize, profile
    from kernel_lab.lifting import put_back


def __getattr__(name: str) -> Any:
    if name in ("profile", "diagnose", "analyze", "compare", "optimize", "lift"):
        from kernel_lab import api

        return getattr(api, name)
    if name == "put_back":
        from kernel_lab.lifting import put_back

        return put_back
    if name == "optimize_suite":
        from kernel_lab.suite import optimize_suite

        return optimize_suite
    if name == "samples":
        import importlib

        return importlib.import_module("kernel_lab.samples")
    raise AttributeError(f"module 'kernel_lab' has no attribute {name!r}")


def _jupyter_labextension_paths() -> list[dict[str, str]]:
    """Where JupyterLab finds the built extension (``jupyter labextension develop .``)."""
    return [{"src": "labextension", "dest": "kernel-lab"}]


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext kernel_lab``: registers ``%%profile`` and ``%%optimize``."""
    from kernel_lab.magics import KernelLabMagics, body_optional

    ipython.register_magics(KernelLabMagics)
    if body_optional not in ipython.input_transformers_cleanup:
        ipython.input_transformers_cleanup.append(body_optional)
