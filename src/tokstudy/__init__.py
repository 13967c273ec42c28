"""tokstudy: a reproducible study of subword tokenizers across languages."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("tokstudy")
except PackageNotFoundError:  # run from a source tree that was never installed
    __version__ = "0+unknown"
