"""The judge builds a candidate's CUDA in two halves: kernels without torch, glue against a precompiled header."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kernel_lab.fastbuild import build_folder, split
from kernel_lab.rewrite.cuda import pad_shared_tiles

ROOT = Path(__file__).resolve().parent.parent
TORCH = re.compile(r"#include\s*<(?:torch|ATen|c10)/|\b(?:torch|at|c10)::")


def cuda_sources() -> list[tuple[str, str]]:
    """Every CUDA source with a launch in the package's samples, the course and the conductor's suite."""
    found = []
    for path in sorted([*ROOT.glob("kernel_lab/**/*.py"), *ROOT.glob("tests/data/suite/*.py")]):
        for source in re.findall(r'"""(.*?)"""', path.read_text(), re.S):
            if re.search(r"__global__ void \w+\(", source) and "<<<" in source and "load_inline" in path.read_text():
                found.append((path.name, source))
    return found


def test_every_cuda_cell_we_ship_splits_into_kernels_without_torch_and_glue_without_launches():
    sources = cuda_sources()
    assert len(sources) >= 30
    for name, source in sources:
        halves = split(source)
        assert halves is not None, name
        assert not TORCH.search(halves.device), name
        assert "<<<" not in halves.host, name
        kernels = set(re.findall(r"__global__\s+(?:void\s+)?(?:__\w+__\s*\([^)]*\)\s*)?(?:void\s+)?(\w+)\s*\(", source))
        launched = set(re.findall(r"\b(\w+)\s*<<<", source))
        assert launched <= kernels, name
        for kernel in launched:  # a stub per launched kernel, defined with the kernels, declared and called in the glue
            assert re.search(rf"void kl_launch_{kernel}\(.*\) {{\n    {kernel}<<<kl_grid", halves.device), name
            assert halves.host.count(f"kl_launch_{kernel}(") >= 2, name


def test_a_launch_keeps_its_configuration_and_arguments():
    source = """
#include <torch/extension.h>
#define T 128
struct Pair { float a, b; };
__device__ float twice(float x) { return 2 * x; }
__global__ void __launch_bounds__(T) k(const float* __restrict__ x, Pair p, float* y, int n = 0) {
    int i = blockIdx.x * T + threadIdx.x; if (i < n) y[i] = twice(x[i]) * p.a + p.b;  // a comment ; {
}
__global__ void empty() {}
torch::Tensor f(torch::Tensor x) {
    auto y = torch::empty_like(x); int n = x.numel();
    cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, 0);
    k<<<(n + T - 1) / T, T, 0, at::cuda::getCurrentCUDAStream()>>>(x.data_ptr<float>(), Pair{1.f, 2.f}, y.data_ptr<float>(), n);
    empty<<<1, dim3(1, 1)>>>();
    return y;
}
"""
    halves = split(source)
    assert halves is not None
    assert "struct Pair" in halves.device and "struct Pair" in halves.host  # types go to both halves
    assert "__device__ float twice" in halves.device and "twice" not in halves.host
    assert "y[i] = twice(x[i]) * p.a + p.b;  // a comment ; {" in halves.device  # lines read as written
    assert "#define T 128" in halves.device and "#define T 128" in halves.host
    assert (
        "kl_launch_k(dim3((n + T - 1) / T), dim3(T), 0, at::cuda::getCurrentCUDAStream(), "
        "x.data_ptr<float>(), Pair{1.f, 2.f}, y.data_ptr<float>(), n)" in halves.host
    )
    assert "kl_launch_empty(dim3(1), dim3(dim3(1, 1)), 0, 0);" in halves.host
    assert "const float* __restrict__ x, Pair p, float* y, int n)" in halves.device  # the default is the launch's business
    assert "k<<<kl_grid, kl_block, kl_shared, kl_stream>>>(x, p, y, n);" in halves.device
    # a kernel named by the host (its attributes, its occupancy) is reached through a pointer from the kernels' half
    assert "cudaFuncSetAttribute(kl_kernel_k(), " in halves.host and "const void* kl_kernel_k();" in halves.host
    assert "const void* kl_kernel_k() { return reinterpret_cast<const void*>(&k); }" in halves.device
    assert "kl_kernel_empty" not in halves.host + halves.device


@pytest.mark.parametrize(
    "source",
    [
        # a template launched with its arguments, alone or beside a plain launch
        "template <int N> __global__ void k(float* y) {}\nvoid f(float* y) { k<4><<<1, 1>>>(y); }",
        "template <int N> __global__ void k(float* y) {}\n__global__ void p(float* y) {}\n"
        "void f(float* y) { p<<<1, 1>>>(y); k<4><<<1, 1>>>(y); }",
        # conditional compilation
        "#ifdef FAST\n#define T 1\n#endif\n__global__ void k(float* y) {}\nvoid f(float* y) { k<<<1, 1>>>(y); }",
        # torch types in device code
        "#include <torch/extension.h>\n__global__ void k(at::Half* y) {}\nvoid f(at::Half* y) { k<<<1, 1>>>(y); }",
        # a kernel launched from the device (dynamic parallelism)
        "__global__ void c() {}\n__global__ void p() { c<<<1, 1>>>(); }\nvoid f() { p<<<1, 1>>>(); }",
        # a namespace
        "namespace z { __global__ void k() {} }\nvoid f() { z::k<<<1, 1>>>(); }",
        # unbalanced text
        "__global__ void k() {\nvoid f() { k<<<1, 1>>>(); }",
        # nothing launched
        "__global__ void k() {}",
    ],
)
def test_what_the_split_does_not_understand_is_built_as_written(source):
    assert split(source) is None


def test_a_version_that_changes_only_its_kernels_builds_where_its_torch_half_is_already_compiled():
    source = (ROOT / "kernel_lab" / "samples" / "kernels" / "shared_bank_conflicts.py").read_text()
    cuda = re.search(r'CUDA_SRC = r"""(.*?)"""', source, re.S).group(1)
    padded = pad_shared_tiles(f'CUDA_SRC = r"""{cuda}"""')
    assert padded is not None
    a, b = split(cuda), split(re.search(r'r"""(.*?)"""', padded, re.S).group(1))
    assert a is not None and b is not None and a.host == b.host and a.device != b.device  # only the kernels differ
    assert build_folder("kls_t", ["decl", a.host], ["-O3"]) == build_folder("kls_t", ["decl", b.host], ["-O3"])
    assert build_folder("kls_t", ["decl", a.host], ["-O3"]) != build_folder("kls_t", ["decl", a.host + " "], ["-O3"])
    assert build_folder("kls_t", ["decl", a.host], ["-O3"]) != build_folder("kls_t", ["decl", a.host], ["-O2"])
