"""Widget callbacks that show their exceptions in the notebook instead of losing them."""

from __future__ import annotations

import functools
import traceback
from collections.abc import Callable
from typing import Any

import ipywidgets as widgets


def guarded(errors: widgets.Output) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator: run the callback; on an exception, print its traceback into ``errors``."""

    def wrap(fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def call(*args: Any, **kwargs: Any) -> Any:
            try:
                return fn(*args, **kwargs)
            except Exception:  # noqa: BLE001 - shown to the user below, not swallowed
                errors.append_stderr(f"Kernel Lab: error in {fn.__name__}:\n{traceback.format_exc()}")
                return None

        return call

    return wrap
