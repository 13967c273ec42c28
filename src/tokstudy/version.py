"""The installed package's version (``tokstudy.__version__``), in a module of its own so
that the library records it without importing the package's face (and its API)."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("tokstudy")
except PackageNotFoundError:  # run from a source tree that was never installed
    __version__ = "0+unknown"
