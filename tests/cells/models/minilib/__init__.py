"""A stand-in for a library of kernels (Liger-Kernel's RMSNorm, Unsloth's SwiGLU), vendored with their licences from
tests/cells/corpus, so that a model-step cell can call library kernels as a user's model does."""

from minilib.rms_norm import rms_norm
from minilib.swiglu import swiglu

__all__ = ["rms_norm", "swiglu"]
