"""tokstudy: a reproducible study of subword tokenizers across languages.

``import tokstudy`` is light: the functions of :mod:`tokstudy.api` (``tokstudy.measure``,
``tokstudy.segment``, …; docs/api.md) are imported on first use (PEP 562), so the command
line and the workflow do not pay for pandas or torch they do not use.
"""

from importlib import import_module
from importlib.metadata import PackageNotFoundError, version
from typing import Any

try:
    __version__ = version("tokstudy")
except PackageNotFoundError:  # run from a source tree that was never installed
    __version__ = "0+unknown"

#: ``__version__`` and the functions of :mod:`tokstudy.api` that ``import tokstudy`` gives
__all__ = ["__version__", "correlate", "load_tokenizer", "measure", "segment", "train_tokenizer"]


def __getattr__(name: str) -> Any:
    """``tokstudy.<function>``: the function of :mod:`tokstudy.api`, imported on first use."""
    if name in __all__:
        return getattr(import_module("tokstudy.api"), name)
    raise AttributeError(f"module 'tokstudy' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
