"""tokstudy: a reproducible study of subword tokenizers across languages.

``import tokstudy`` is light: the functions of :mod:`tokstudy.api` (``tokstudy.measure``,
``tokstudy.segment``, …; docs/api.md) are imported on first use (PEP 562), so the command
line and the workflow do not pay for pandas or torch they do not use.
"""

from importlib import import_module
from typing import Any

from tokstudy.version import __version__

#: ``__version__`` and the functions of :mod:`tokstudy.api` that ``import tokstudy`` gives
__all__ = ["__version__", "correlate", "load_tokenizer", "measure", "segment", "train_tokenizer"]


def __getattr__(name: str) -> Any:
    """``tokstudy.<function>``: the function of :mod:`tokstudy.api`, imported on first use."""
    if name in __all__:
        # relative: a module named in a string literal counts as imported by this package
        # for the workflow's code fingerprints, and every step's code would then include
        # the API (tokstudy.workflow.code_fingerprint), which no step runs
        return getattr(import_module(".api", __name__), name)
    raise AttributeError(f"module 'tokstudy' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
