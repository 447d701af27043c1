"""Build a candidate's ``load_inline`` extension in seconds instead of a minute.

``load_inline`` compiles two files, and both parse PyTorch's headers: ``main.cpp`` (the cell's C++
and the Python bindings, about half a minute of ``torch/extension.h`` and pybind11) and ``cuda.cu``
(the kernels *and* the host functions that take ``torch::Tensor``, the same headers again, through
nvcc's front end). The kernels themselves are a few dozen lines. So, in the processes where Kernel
Lab runs a cell (the profiler's, the judge's: never the user's notebook), :func:`install` makes
``load_inline`` build the same code in two other halves:

- the kernels (``__global__``/``__device__`` code, the cell's defines, constants and non-torch
  includes) alone in ``cuda.cu``, compiled by nvcc with no PyTorch header, plus one small host stub
  per launched kernel that does the ``<<<grid, block, shared, stream>>>`` launch;
- everything that touches torch in ``main.cpp``, each ``kernel<<<...>>>(args)`` replaced by a call of
  its stub, compiled by the host compiler against a precompiled ``torch/extension.h`` that is built
  once per set of flags and kept beside the builds.

The kernels are compiled from the same text (comments kept, so a profile's source lines read as the
cell's) with the same nvcc flags, so they are the same kernels. Builds live in one folder per torch half
(``main.cpp`` and the flags), shared by the profiler's and the judge's processes: a version whose torch code
is that of a version built before (a padded tile, ``__launch_bounds__``, a kernel rewritten in place)
compiles its kernels alone and links, and one profiled is not built again to be judged.
Anything the split does not understand (templates launched with arguments, conditional compilation,
namespaces, torch types in device code) or any failure of the fast build falls back to
``load_inline`` as the cell wrote it, so the result never depends on this module working.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kernel_lab.builds import build_root

_TORCH_INCLUDE = re.compile(r"#\s*include\s*[<\"](?:torch|ATen|c10|pybind11|caffe2)/")
_TORCH_NAME = re.compile(r"\b(?:torch|at|c10|pybind11)::|\b(?:AT|TORCH|C10)_[A-Z_]+\b")
_DEVICE_ONLY = re.compile(r"\b(?:__global__|__device__|__constant__|__shared__)\b")
_HOST_DEVICE = re.compile(r"\b__host__\b")
_LAUNCH = re.compile(r"\b(\w+)\s*<<<")
_BOUNDS = re.compile(r"__(?:launch_bounds|maxnreg)__\s*\([^()]*\)")
_FUNCTION = re.compile(r"\)\s*(?:const\s*)?(?:noexcept\s*)?\{")


@dataclass(frozen=True)
class Kernel:
    """A ``__global__`` function the host code launches: its name and parameter list."""

    name: str
    params: str  # as written, defaults removed
    names: tuple[str, ...]

    @property
    def stub(self) -> str:
        return f"kl_launch_{self.name}"

    @property
    def pointer(self) -> str:
        return f"kl_kernel_{self.name}"

    def signature(self) -> str:
        extra = f", {self.params}" if self.params else ""
        return f"void {self.stub}(dim3 kl_grid, dim3 kl_block, size_t kl_shared, cudaStream_t kl_stream{extra})"


@dataclass(frozen=True)
class Split:
    """The two halves of a cell's CUDA source."""

    device: str  # for nvcc, no torch header
    host: str  # for the host compiler, launches through the stubs


def _items(source: str) -> list[tuple[str, str]] | None:
    """Top-level items in order, each as (its code with comments blanked out, its text as written):
    preprocessor lines (continuations joined) and declarations or definitions up to their ``;`` or
    closing brace. None where the text does not balance."""
    text = re.sub(r"//[^\n]*|/\*.*?\*/", lambda m: re.sub(r"[^\n]", " ", m.group()), source, flags=re.S)
    items: list[tuple[str, str]] = []
    depth, start, i = 0, 0, 0
    while i < len(text):
        ch = text[i]
        if depth == 0 and ch == "#" and not text[start:i].strip():
            end = i
            while True:
                end = text.find("\n", end)
                if end < 0:
                    end = len(text)
                    break
                if text[end - 1] != "\\":
                    break
                end += 1
            items.append((text[i:end].strip(), source[i:end].strip()))
            i = start = end
            continue
        if ch in "\"'":
            close = text.find(ch, i + 1)
            while close > 0 and text[close - 1] == "\\":
                close = text.find(ch, close + 1)
            if close < 0:
                return None
            i = close + 1
            continue
        if ch in "{(":
            depth += 1
        elif ch in "})":
            depth -= 1
            if depth < 0:
                return None
        if depth == 0 and ch in ";}":
            if ch == "}":  # a brace may close a declaration that goes on: `struct S {...};`, `} s;`
                tail = re.match(r"\s*(?:\w+\s*)?;", text[i + 1 :])
                i += tail.end() if tail else 0
            items.append((text[start : i + 1].strip(), source[start : i + 1].strip()))
            start = i + 1
        i += 1
    if depth or text[start:].strip():
        return None
    return items


def _kernel(item: str) -> Kernel | None:
    """The kernel an item defines or declares (None when it is not a plain ``__global__`` function)."""
    head = _BOUNDS.sub(" ", item.split("{", 1)[0])
    if "__global__" not in head or "template" in head:
        return None
    match = re.search(r"(\w+)\s*\((.*)\)\s*;?\s*$", head, re.S)
    if not match:
        return None
    params = [re.sub(r"=.*", "", p).strip() for p in _top_level(match.group(2), angles=True)]
    params = [p for p in params if p and p != "void"]
    names = []
    for param in params:
        found = re.findall(r"\w+", re.sub(r"\[[^\]]*\]", "", param))
        if len(found) < 2:
            return None  # an unnamed parameter: a declaration, not the definition
        names.append(found[-1])
    return Kernel(match.group(1), ", ".join(params), tuple(names))


def _top_level(text: str, angles: bool = False) -> list[str]:
    """Split at commas outside brackets (and outside ``<...>`` for parameter types)."""
    out: list[str] = []
    depth, current = 0, list[str]()
    opening, closing = ("([{<", ")]}>") if angles else ("([{", ")]}")
    for ch in text:
        depth += (ch in opening) - (ch in closing)
        if ch == "," and depth == 0:
            out.append("".join(current))
            current = []
        else:
            current.append(ch)
    out.append("".join(current))
    return out


def _relaunch(item: str, kernels: dict[str, Kernel]) -> str | None:
    """A host item with each ``kernel<<<cfg>>>(args)`` turned into a stub call (None if one is not ours)."""
    out, pos = [], 0
    for match in _LAUNCH.finditer(item):
        kernel = kernels.get(match.group(1))
        close = item.find(">>>", match.end())
        if kernel is None or close < 0 or match.start() < pos:
            return None
        config = [c.strip() for c in _top_level(item[match.end() : close])]
        if not 2 <= len(config) <= 4:
            return None
        config = [f"dim3({config[0]})", f"dim3({config[1]})", *config[2:]]
        config += ["0", "0"][: 4 - len(config)]
        paren = item.find("(", close)
        if paren < 0 or item[close + 3 : paren].strip():
            return None
        end = _matching(item, paren)
        args = item[paren + 1 : end]
        joined = ", ".join(config) + (f", {args}" if args.strip() else "")
        out.append(item[pos : match.start()] + f"{kernel.stub}({joined}")
        pos = end
    out.append(item[pos:])
    return "".join(out)


def _matching(text: str, open_at: int) -> int:
    depth = 0
    for i in range(open_at, len(text)):
        depth += (text[i] == "(") - (text[i] == ")")
        if depth == 0:
            return i
    return len(text)


def split(cuda_source: str) -> Split | None:
    """The cell's CUDA source as a torch-free kernel file and a host file, or None where it cannot be split."""
    items = _items(cuda_source)
    if items is None or "<<<" not in cuda_source:
        return None
    device: list[str] = ["#include <cuda_runtime.h>"]
    host: list[str] = ["#include <torch/extension.h>", "#include <cuda_runtime.h>"]
    kernels: dict[str, Kernel] = {}
    launched: list[str] = []
    for code, text in items:  # decided on the code, kept as written (comments too) where it is not rewritten
        if code.startswith("#"):
            directive = code[1:].lstrip().split(None, 1)[0] if code[1:].strip() else ""
            if directive == "include" and _TORCH_INCLUDE.match(code):
                host.append(text)
            elif directive in ("include", "define", "undef"):
                device.append(text)
                host.append(text)
            elif directive not in ("pragma", ""):
                return None  # conditional compilation: which half sees what is not ours to decide
            continue
        if code.startswith(("namespace", "using namespace")) and "{" in code:
            return None
        if _DEVICE_ONLY.search(code) and not _HOST_DEVICE.search(code):
            if _TORCH_NAME.search(code) or "<<<" in code:
                return None  # torch types or dynamic parallelism in device code
            kernel = _kernel(code)
            if kernel is not None and "{" in code:
                kernels[kernel.name] = kernel
            device.append(text)
        elif (
            "<<<" in code
            or _TORCH_NAME.search(code)
            or (
                _FUNCTION.search(code)
                and not _HOST_DEVICE.search(code)
                and not code.startswith(("template", "inline", "static inline", "constexpr", "struct", "class"))
            )
        ):
            launched.extend(m.group(1) for m in _LAUNCH.finditer(code))
            host.append(code)
        else:
            device.append(text)  # types, constants, __host__ __device__ helpers: both halves
            host.append(text)
    if not launched or any(name not in kernels for name in launched):
        return None
    stubs = [kernels[name] for name in dict.fromkeys(launched)]
    rewritten = []
    for item in host:
        if "<<<" in item:
            new = _relaunch(item, kernels)
            if new is None or "<<<" in new:  # a launch the stubs do not reach (a template's, say)
                return None
            item = new
        rewritten.append(item)
    named = [k for k in kernels.values() if any(re.search(rf"\b{k.name}\b", i) for i in rewritten if not i.startswith("#"))]
    for k in named:  # the host names a kernel to set its attributes or ask its occupancy: hand it a pointer
        rewritten = [i if i.startswith("#") else re.sub(rf"\b{k.name}\b", f"{k.pointer}()", i) for i in rewritten]
    first_host = next(i for i, item in enumerate(host) if "<<<" in item)
    declared = [f"{k.signature()};" for k in stubs] + [f"const void* {k.pointer}();" for k in named]
    rewritten = rewritten[:first_host] + declared + rewritten[first_host:]
    device.append("// Kernel Lab built the kernels apart from the torch code: the cell's launches call these stubs")
    for k in stubs:
        device.append(f"{k.signature()} {{\n    {k.name}<<<kl_grid, kl_block, kl_shared, kl_stream>>>({', '.join(k.names)});\n}}")
    device += [f"const void* {k.pointer}() {{ return reinterpret_cast<const void*>(&{k.name}); }}" for k in named]
    return Split("\n".join(device) + "\n", "\n".join(rewritten) + "\n")


# --- building ---------------------------------------------------------------------------------------


def _host_flags(name: str, cflags: list[str], include_paths: list[str]) -> tuple[list[str], list[str]]:
    """The compiler and the flags torch compiles ``main.cpp`` with for this module (from the ninja file
    torch would write), so a header precompiled with them is accepted."""
    from torch.utils import cpp_extension

    with tempfile.TemporaryDirectory() as tmp:
        ninja = Path(tmp) / "build.ninja"
        cpp_extension._write_ninja_file_to_build_library(  # the same flags load_inline uses
            str(ninja), name, [str(Path(tmp) / "main.cpp")], cflags, [], [], [], include_paths, True, False, False
        )
        lines = dict(
            line.split(" = ", 1) for line in ninja.read_text().splitlines() if " = " in line and not line.startswith(" ")
        )
    flags = shlex.split(lines.get("cflags", "")) + shlex.split(lines.get("post_cflags", ""))
    return shlex.split(lines["cxx"]), [f for f in flags if not f.startswith("-DTORCH_EXTENSION_NAME=")]


def precompiled_header(cxx: list[str], flags: list[str]) -> Path:
    """A header that includes ``torch/extension.h``, precompiled beside itself for these flags (once;
    processes that ask at the same time wait for the first)."""
    key = hashlib.sha256(shlex.join([*cxx, *flags]).encode()).hexdigest()[:16]
    folder = build_root() / "kernel_lab" / "pch" / key
    folder.mkdir(parents=True, exist_ok=True)
    header, compiled = folder / "torch_extension.h", folder / "torch_extension.h.gch"
    with open(folder / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not compiled.exists():
            header.write_text("#include <torch/extension.h>\n")
            partial = folder / f"partial-{os.getpid()}.gch"
            subprocess.run([*cxx, "-x", "c++-header", str(header), "-o", str(partial), *flags], check=True, capture_output=True)
            os.replace(partial, compiled)
    return header


def prepare() -> Path:
    """The precompiled header of a cell that passes no flags of its own (built now if it is not there)."""
    return precompiled_header(*_host_flags("kernel_lab", [], []))


def prepare_in_background() -> subprocess.Popen:
    """:func:`prepare` in another process, for the judge to start while the original is profiled."""
    return subprocess.Popen([sys.executable, "-m", "kernel_lab.fastbuild"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def build_folder(name: str, torch_sources: list[str], flags: list[str]) -> Path:
    """Where a split build of ``name`` happens: one folder per torch half and flags, so that a version changing only
    its kernels finds the torch half compiled there and compiles its kernels alone (about a second, against the
    torch half's eight)."""
    key = hashlib.sha256("\n".join([name, *torch_sources, *flags]).encode()).hexdigest()[:16]
    return build_root() / "kernel_lab" / "fast" / key


def _fast(plain: Callable[..., Any], name: str, cpp_sources: list[str], halves: Split, **options: Any) -> Any:
    """``load_inline`` on the two halves, ``main.cpp`` against the precompiled header."""
    cflags = [flag.strip() for flag in options.pop("extra_cflags", None) or []]
    includes = list(options.get("extra_include_paths") or [])
    cxx, flags = _host_flags(name, cflags, includes)
    header = precompiled_header(cxx, flags)
    options.pop("build_directory", None)
    options.pop("use_pch", None)
    cuda_flags = list(options.pop("extra_cuda_cflags", None) or [])
    options["extra_cuda_cflags"] = cuda_flags + ["-lineinfo"] * ("-lineinfo" not in cuda_flags)  # profiled or not: one build
    folder = build_folder(name, [*cpp_sources, halves.host], [*flags, *options["extra_cuda_cflags"]])
    folder.mkdir(parents=True, exist_ok=True)
    # one build and import at a time in a folder: torch's own lock assumes a folder's sources never change
    with open(folder / "kernel_lab.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return plain(
            name,
            [*cpp_sources, halves.host],
            [halves.device],
            extra_cflags=[*cflags, "-include", str(header), "-Winvalid-pch", "-Werror=invalid-pch"],
            build_directory=str(folder),
            no_implicit_headers=True,
            **options,
        )


def _texts(sources: str | list[str] | None) -> list[str]:
    return [sources] if isinstance(sources, str) else list(sources or [])


def install() -> None:
    """Make ``torch.utils.cpp_extension.load_inline`` build split, in this process (a profiled or judged cell's)."""
    from torch.utils import cpp_extension

    plain = cpp_extension.load_inline
    if getattr(plain, "kernel_lab_fast", False):
        return

    def load_inline(name: str, cpp_sources: Any, cuda_sources: Any = None, *args: Any, **options: Any) -> Any:
        halves = split("\n".join(_texts(cuda_sources))) if cuda_sources and not args else None
        if (
            halves is None
            or options.get("is_python_module") is False
            or options.get("sycl_sources")
            or options.get("no_implicit_headers")
        ):
            return plain(name, cpp_sources, cuda_sources, *args, **options)
        try:
            return _fast(plain, name, _texts(cpp_sources), halves, **options)
        except Exception as exc:  # noqa: BLE001 - the cell's own build decides what is wrong
            print(f"kernel_lab: building {name} as written (the split build failed: {type(exc).__name__})", file=sys.stderr)
            return plain(name, cpp_sources, cuda_sources, **options)

    load_inline.kernel_lab_fast = True  # type: ignore[attr-defined]
    cpp_extension.load_inline = load_inline


if __name__ == "__main__":
    prepare()
