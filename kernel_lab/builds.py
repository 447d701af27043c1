"""One build folder per cell source for ``torch.utils.cpp_extension.load_inline``.

``load_inline`` rebuilds a module whenever the sources under its name differ from the last build in
its folder. The optimize loop runs the original and every candidate (same module name, different
sources) in fresh processes, one after another, so with one shared folder each verification would
rebuild the original as well as the candidate. A folder per source lets every build be reused: the
original is built once per session (when it is first profiled), each candidate once to verify it.
"""

from __future__ import annotations

import hashlib
import os
from functools import cache
from pathlib import Path


@cache
def build_root() -> Path:
    """Where the per-source folders go: the user's TORCH_EXTENSIONS_DIR, else torch's default."""
    given = os.environ.get("TORCH_EXTENSIONS_DIR")
    if given:
        return Path(given)
    from torch.utils.cpp_extension import get_default_build_root

    return Path(get_default_build_root())


def use_folder_for(source: str) -> Path | None:
    """Point ``load_inline`` at the build folder of this cell source (in this process, from now on).

    The folder also depends on the torch and CUDA versions, which the build depends on. A cell that
    does not call ``load_inline`` is left alone (None).
    """
    if "load_inline" not in source:
        return None
    import torch

    key = f"{torch.__version__} {torch.version.cuda}\n{source}"
    folder = build_root() / "kernel_lab" / hashlib.sha256(key.encode()).hexdigest()[:16]
    os.environ["TORCH_EXTENSIONS_DIR"] = str(folder)
    return folder
