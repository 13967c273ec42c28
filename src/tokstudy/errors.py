"""User-facing errors: one clear line naming the file or key and what is wrong."""


class TokstudyError(Exception):
    """An error caused by input or configuration, reported as one line."""


class VocabSizeError(TokstudyError):
    """A requested vocabulary size the algorithm cannot reach."""
