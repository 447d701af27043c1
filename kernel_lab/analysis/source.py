"""Map per-line counters back to the user's source lines."""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from kernel_lab.models import Kernel, SourceLine


@lru_cache(maxsize=64)
def file_lines(path: str) -> tuple[str, ...]:
    try:
        return tuple(Path(path).read_text(errors="replace").splitlines())
    except OSError:
        return ()


def line_text(kernel: Kernel, file: str, line: int) -> str:
    """The text of ``file:line`` from the report's imported source, else from disk, else ''."""
    content = kernel.source_files.get(file)
    lines = tuple(content.splitlines()) if content is not None else file_lines(file)
    return lines[line - 1].strip() if 0 < line <= len(lines) else ""


#: where the toolchain's own code lives: Triton's language modules, CUDA's and torch's headers
_TOOLCHAIN = re.compile(r"/(?:site-packages|dist-packages|include)/")


def toolchain(path: str) -> bool:
    """Whether a source file of a kernel is the toolchain's (library code inlined into it), not the user's own."""
    return bool(_TOOLCHAIN.search(path))


def top_lines(kernel: Kernel, counter: str, *, n: int = 3, min_share: float = 0.05) -> tuple[SourceLine, ...]:
    """The ``n`` lines holding the largest share of ``counter`` (a key of ``Kernel.line_counters``)."""
    per_line = kernel.line_counters.get(counter, {})
    total = sum(per_line.values())
    if total <= 0:
        return ()
    ranked = sorted(per_line.items(), key=lambda item: -item[1])[:n]
    return tuple(
        SourceLine(file=f, line=ln, share=v / total, text=line_text(kernel, f, ln))
        for (f, ln), v in ranked
        if v / total >= min_share
    )


# --- data-dependent addresses ---------------------------------------------------------------------------------------

_TRITON_ACCESS = re.compile(r"\btl\.(?:load|store|atomic_\w+)\s*\(")
#: ``name = tl.load(...)`` in Triton; ``name = ptr[...]`` (after an optional cast or call such as __ldg(&...)) in CUDA
_TRITON_LOADED = re.compile(r"\b([A-Za-z_]\w*)\s*(?<![<>!=+\-*/%&|^])=(?!=)\s*tl\.load\s*\(")
_CUDA_LOADED = re.compile(
    r"\b([A-Za-z_]\w*)\s*(?<![<>!=+\-*/%&|^])=(?!=)\s*(?:\([^()]*\)\s*)?(?:[\w:]+\s*\(\s*&?\s*)?[A-Za-z_]\w*\s*\["
)


def _balanced(text: str, start: int, opening: str, closing: str) -> str:
    """The text from ``start`` (just after an opening bracket) to its closing bracket, or to the end of the line."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] == opening:
            depth += 1
        elif text[i] == closing:
            if depth == 0:
                return text[start:i]
            depth -= 1
    return text[start:]


def _first_argument(text: str, start: int) -> str:
    """The first argument of the call whose arguments begin at ``start`` (top-level comma or closing parenthesis)."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] in "([{":
            depth += 1
        elif text[i] in ")]}":
            if depth == 0:
                return text[start:i]
            depth -= 1
        elif text[i] == "," and depth == 0:
            return text[start:i]
    return text[start:]


def _addresses(text: str, triton: bool) -> list[str]:
    """The address expressions of the memory accesses on one line: tl.load/store/atomic pointers, or subscripts."""
    if triton:
        return [_first_argument(text, m.end()) for m in _TRITON_ACCESS.finditer(text)]
    return [_balanced(text, m.end(), "[", "]") for m in re.finditer(r"[A-Za-z_]\w*\s*\[", text)]


def loaded_names(source: str, triton: bool) -> frozenset[str]:
    """Names that a kernel's source binds directly to a value loaded from memory."""
    return frozenset((_TRITON_LOADED if triton else _CUDA_LOADED).findall(source))


def indirect(text: str, loaded: frozenset[str], triton: bool) -> bool:
    """Whether a line's memory address is computed from loaded data (x[col[k]], tl.load(p + node) with node
    loaded): a gather or scatter, whose addresses the data sets, not the mapping of threads to elements."""
    code = text.split("#" if triton else "//")[0]
    for address in _addresses(code, triton):
        if (not triton and re.search(r"[A-Za-z_]\w*\s*\[", address)) or any(
            re.search(rf"\b{re.escape(name)}\b", address) for name in loaded
        ):
            return True
    return False


def indirect_share(kernel: Kernel, counter: str) -> float:
    """Share of a per-line counter on lines whose memory addresses are computed from loaded data (0..1)."""
    per_line = kernel.line_counters.get(counter, {})
    total = sum(per_line.values())
    if total <= 0:
        return 0.0
    names: dict[str, frozenset[str]] = {}
    found = 0.0
    for (file, line), value in per_line.items():
        source = kernel.source_files.get(file)
        if source is None:
            source = "\n".join(file_lines(file))
        triton = file.endswith(".py")
        if file not in names:
            names[file] = loaded_names(source, triton)
        lines = source.splitlines()
        if 0 < line <= len(lines) and indirect(lines[line - 1], names[file], triton):
            found += value
    return found / total
