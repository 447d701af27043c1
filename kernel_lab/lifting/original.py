"""The code of a lifted cell's ``_original()``: the original kernel object, for ``reference()`` to launch.

* A library's kernel: its module imported by name (the folder it was imported from added to ``sys.path``), so the
  reference is the library's own code, whatever the copy in the cell became.
* A kernel whose module is not here (a report from another machine): the module's file as the report holds it,
  loaded as a module.
* A kernel ``torch.compile`` wrote: the file Inductor wrote, as the report holds it, with its decorator
  (``@triton_heuristics.pointwise(...)``), loaded as a module; its launcher's ``.fn`` is the kernel as it was.
  Without a GPU, its ``triton_helpers.set_driver_to_gpu()`` line is skipped (there is no GPU driver to set).
"""

from __future__ import annotations

from kernel_lab.lifting.library import Module

GPU_DRIVER = "triton_helpers.set_driver_to_gpu()"


def by_name(module: Module, kernel: str) -> str:
    return f'''@functools.cache
def _original():
    """The library's own {kernel}, from {module.name} as the profiled run imported it."""
    import importlib
    import sys

    if {module.root!r} not in sys.path:
        sys.path.append({module.root!r})
    return importlib.import_module({module.name!r}).{kernel}
'''


def _literal(text: str) -> str:
    if '"""' not in text and "\\" not in text and not text.endswith('"'):
        return f'"""{text}"""'
    return repr(text)


def from_file(text: str, file: str, kernel: str, inductor: bool) -> str:
    """``_original()`` loading ``text`` (the file ``file`` as the report holds it) as a module."""
    attribute = f"{kernel}.fn" if inductor else kernel
    what = "the file Inductor wrote" if inductor else "the kernel's module"
    driver = f".replace({GPU_DRIVER!r}, 'pass')" if GPU_DRIVER in text else ""
    return f'''ORIGINAL_FILE = {_literal(text)}  # {file}, as the report holds it


@functools.cache
def _original():
    """The original kernel, as the profiled run had it: {what}, loaded as a module."""
    import hashlib
    import importlib.util
    import tempfile
    from pathlib import Path

    text = ORIGINAL_FILE if DEVICE == "cuda" else ORIGINAL_FILE{driver}
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    path = Path(tempfile.gettempdir()) / "kernel_lab_lifted" / f"original_{{digest}}.py"
    path.parent.mkdir(exist_ok=True)
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.{attribute}
'''
