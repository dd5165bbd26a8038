"""Compile a GE graph's codegen module with IREE into an executable (a vmfb) for one backend.

`compile_executable(text, backend, graph=..., variant=...)` runs `iree.compiler.compile_str` with
the flags of the backend and variant (`compile_flags`) and gives a `CompiledExecutable`, which
records the variant (also in its `target` text). Compiles are memoized in the process by (SHA-256
of the text, backend, variant, flags), so a test suite or a pipeline that compiles one graph many
times pays once. The same text and flags give the same bytes (measured: two compiles are
byte-identical on both backends), so the `.om` stays deterministic.

The flags, per backend:

- `iree-cpu`: IREE's llvm-cpu backend for the compiling machine's CPU
  (`--iree-llvmcpu-target-cpu=host`; without it IREE targets a generic CPU, which is slow).
- `iree-cuda`: IREE's CUDA backend for `CUDA_TARGET`. It cross-compiles without a GPU; the
  executable embeds PTX, which the CUDA driver compiles for newer GPUs too. IREE 3.13 refuses
  `sm_90` ("missing GPU target"), so an H200 runs the sm_80 PTX.
- both: f64 and i64 stay exact. IREE demotes f64 to f32 by default (and changes the function's
  signature, so an f64 graph would fail at run time); `--iree-input-demote-f64-to-f32=false`
  turns that off, and the i64 demotion is spelled out off as well.

Variants (`CPU_VARIANTS`, data: name -> flags added to the backend's) are the code generation
strategies IREE offers for convolutions and matrix products; `iree-cuda` has only "default".
No variant is right for every graph, and a flag set can miscompile (im2col without data tiling
gave ResNet-50 a relative error of 2.8), so a variant is chosen by measuring: compile each of
`AUTO_CPU_VARIANTS` (best first), check its outputs against the reference kernels, time it, and
keep the fastest correct one. Measured on torchvision CNNs (random weights, batch 1, one thread,
ratio to onnxruntime on one thread; `benchmarks/ge_exec.py --cnns`, docs/backends.md has the
table): EfficientNet-B0 / MobileNetV2 / MobileNetV3-small / ResNet-18 / SqueezeNet 1.1

    default   6.9 / 8.8 / 8.2 / 7.6 / 15.7
    tiled     4.0 / 4.4 / 4.8 / 1.8 / 2.1
    im2col    3.3 / 3.6 / 3.2 / 2.4 / 2.4

`tiled` is best on plain convolutions (SqueezeNet, ResNet), `im2col` on depthwise-heavy nets.

`iree.compiler` is imported only when something is compiled (`# lazy:` below): loading and
running a `.om` never needs it.
"""
from __future__ import annotations

import hashlib
import platform
import time
from dataclasses import dataclass

from dfir.core.backends import IREE_CPU, IREE_CUDA
from dfir.core.errors import GeError

__all__ = ["AUTO_CPU_VARIANTS", "CPU_VARIANTS", "CUDA_TARGET", "DEFAULT_VARIANT", "CompiledExecutable",
           "compile_executable", "compile_flags", "forget_compiled", "variants_of"]

CUDA_TARGET = "sm_80"
_EXACT_TYPES = ("--iree-input-demote-f64-to-f32=false", "--iree-input-demote-i64-to-i32=false")
_BACKEND_FLAGS: dict[str, tuple[str, ...]] = {
    IREE_CPU: ("--iree-hal-target-device=local", "--iree-hal-local-target-device-backends=llvm-cpu",
                 "--iree-llvmcpu-target-cpu=host"),
    IREE_CUDA: ("--iree-hal-target-device=cuda", f"--iree-cuda-target={CUDA_TARGET}"),
}
DEFAULT_VARIANT = "default"
_DATA_TILING = ("--iree-opt-data-tiling", "--iree-llvmcpu-enable-ukernels=all")
CPU_VARIANTS: dict[str, tuple[str, ...]] = {
    DEFAULT_VARIANT: (),
    # convolutions and matrix products data-tiled (packed into the CPU's tile layout) and run by
    # IREE's microkernels; the set-data-tiling-ops flag takes one op kind per flag
    # (EfficientNet-B0 needs 34816 bytes of stack in one dispatch: the limit is 32 KiB by default)
    "tiled": (*_DATA_TILING, "--iree-dispatch-creation-experimental-set-data-tiling-ops=matmul",
              "--iree-dispatch-creation-experimental-set-data-tiling-ops=convolution",
              "--iree-llvmcpu-stack-allocation-limit=65536"),
    # convolutions rewritten as im2col + matrix product, the products data-tiled
    "im2col": ("--iree-global-opt-use-im2col-for-convs", *_DATA_TILING),
}
AUTO_CPU_VARIANTS: tuple[str, ...] = ("tiled", DEFAULT_VARIANT)
"""The CPU variants a measuring choice tries, best first (`default` compiles every graph). Not
`im2col`: on the torchvision models it miscompiled ResNet-18/50 and RegNetY (errors up to 319),
failed to compile MobileNetV3-small and EfficientNet-B0 at batch 8, and where it was right it
never beat onnxruntime, which `auto` also measures: it only cost a compile."""
_VARIANTS: dict[str, dict[str, tuple[str, ...]]] = {IREE_CPU: CPU_VARIANTS, IREE_CUDA: {DEFAULT_VARIANT: ()}}
_TARGETS = {IREE_CPU: f"llvm-cpu host {platform.machine()}", IREE_CUDA: f"cuda {CUDA_TARGET}"}
_ERROR_LINES = 3  # how many of IREE's error lines a compile failure quotes


@dataclass(frozen=True)
class CompiledExecutable:
    """An IREE executable: the vmfb's bytes, the backend and target it was compiled for, the
    variant of flags (`CPU_VARIANTS`), the compiler flags used and how long the compile took."""

    vmfb: bytes
    backend: str
    target: str
    flags: tuple[str, ...]
    compile_seconds: float
    variant: str = DEFAULT_VARIANT

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.vmfb).hexdigest()


_compiled: dict[tuple[str, str, str, tuple[str, ...]], CompiledExecutable] = {}


def variants_of(backend: str) -> tuple[str, ...]:
    """The variant names of `backend` ("iree-cpu" or "iree-cuda"), "default" first."""
    if backend not in _BACKEND_FLAGS:
        raise GeError(f"backend {backend!r} is not compiled by IREE; expected one of {sorted(_BACKEND_FLAGS)}")
    return tuple(_VARIANTS[backend])


def compile_flags(backend: str, variant: str = DEFAULT_VARIANT) -> tuple[str, ...]:
    """The `iree-compile` flags of `backend` ("iree-cpu" or "iree-cuda") in `variant`."""
    if variant not in variants_of(backend):
        raise GeError(f"backend {backend} has no IREE variant {variant!r}; expected one of "
                      f"{list(variants_of(backend))}")
    return _BACKEND_FLAGS[backend] + _EXACT_TYPES + _VARIANTS[backend][variant]


def compile_executable(mlir_text: str, backend: str, *, graph: str = "main",
                       variant: str = DEFAULT_VARIANT) -> CompiledExecutable:
    """The executable of the module `mlir_text` for `backend` in `variant` (memoized in the
    process); a GeError naming `graph` (the ge.graph's symbol), the variant and IREE's first
    error lines if it fails."""
    flags = compile_flags(backend, variant)
    key = (hashlib.sha256(mlir_text.encode()).hexdigest(), backend, variant, flags)
    if key not in _compiled:
        start = time.perf_counter()
        vmfb = invoke_compiler(mlir_text, flags, graph, backend, variant)
        target = _TARGETS[backend] if variant == DEFAULT_VARIANT else f"{_TARGETS[backend]} {variant}"
        _compiled[key] = CompiledExecutable(vmfb, backend, target, flags, time.perf_counter() - start, variant)
    return _compiled[key]


def forget_compiled() -> None:
    """Empty the process's memo of compiled executables."""
    _compiled.clear()


def invoke_compiler(mlir_text: str, flags: tuple[str, ...], graph: str, backend: str,
                    variant: str = DEFAULT_VARIANT) -> bytes:
    """One run of IREE's compiler on `mlir_text`; GeError naming the graph if it fails."""
    from iree.compiler import CompilerToolError, compile_str  # lazy: only compiling needs IREE's compiler

    try:
        return compile_str(custom_form(mlir_text), extra_args=list(flags))
    except CompilerToolError as error:
        what = backend if variant == DEFAULT_VARIANT else f"{backend} (variant {variant})"
        raise GeError(f"ge.graph @{graph}: IREE could not compile it for {what}: "
                      f"{_first_errors(str(error))}") from None


def custom_form(mlir_text: str) -> str:
    """`mlir_text` (generic form) printed back in MLIR's custom form by IREE's own MLIR.

    IREE compiles a named linalg op parsed from the generic form, whose region is spelled out,
    into much slower code than the same op parsed from its custom form, whose region the op
    builds itself: a conv_2d_nchw_fchw (batch 32, 16 -> 32 channels, 16x16) ran 31-63 ms a call
    against 4.5 ms. Parsing and printing take milliseconds. Text IREE cannot parse is given as it
    is, so that the compile reports the error."""
    from iree.compiler import ir  # lazy: only compiling needs IREE's compiler

    with ir.Context():
        try:
            return str(ir.Module.parse(mlir_text))
        except ir.MLIRError:
            return mlir_text


def _first_errors(diagnostics: str) -> str:
    """IREE's first error lines, joined; its first line when none says `error:`."""
    lines = [line.strip() for line in diagnostics.splitlines() if "error:" in line]
    return "; ".join(lines[:_ERROR_LINES]) or diagnostics.strip().splitlines()[0]
