"""A kernel replaced in this process, reversibly: where its stand-ins are, what they replaced, and the log."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

logger = logging.getLogger("kernel_lab.lifting")
#: the patches in force in this process, oldest first
ACTIVE: list[Patch] = []


@dataclass
class Patch:
    """A kernel replaced in this process; :meth:`undo` (or the end of a ``with`` block) puts the original back."""

    kernel: str
    sites: list[tuple[Any, str, Any, Any]] = field(default_factory=list)  # (module, attribute, original, replacement)
    op: Any = None  # the torch.library.triton_op (a kernel torch.compile wrote)
    op_name: str | None = None  # its name, "kernel_lab::<kernel>": torch.ops.kernel_lab.<kernel> calls it
    log: list[str] = field(default_factory=list)
    replacements: list[Any] = field(default_factory=list)  # what stands for the original (they count launches)

    def replace(self, module: Any, name: str, replacement: Any) -> None:
        """Put ``replacement`` where ``module.name`` is, keeping the original for :meth:`undo`."""
        self.sites.append((module, name, module.__dict__[name], replacement))
        setattr(module, name, replacement)
        if all(r is not replacement for r in self.replacements):
            self.replacements.append(replacement)

    def say(self, message: str) -> None:
        self.log.append(message)
        logger.info(message)

    @property
    def routed(self) -> int:
        """Launches that ran the new kernel so far."""
        return sum(r.routed for r in self.replacements)

    @property
    def passed(self) -> int:
        """Launches left to the original (another configuration than the one profiled)."""
        return sum(r.passed for r in self.replacements)

    def undo(self) -> None:
        """Put the original kernel objects back wherever a replacement stands (again: nothing more to do)."""
        for module, name, original, replacement in self.sites:
            where = f"{getattr(module, '__name__', module)}.{name}"
            if module.__dict__.get(name) is replacement:
                setattr(module, name, original)
                self.say(f"restored {where}")
            else:
                self.say(f"left {where} as it is: something else replaced it since")
        self.sites = []
        if self in ACTIVE:
            ACTIVE.remove(self)

    def __enter__(self) -> Patch:
        return self

    def __exit__(self, *exc: object) -> None:
        self.undo()

    def __str__(self) -> str:
        state = "in force" if self.sites else "undone"
        return f"{self.kernel}: patch {state}; {self.routed} launch(es) ran the new kernel, {self.passed} the original"
