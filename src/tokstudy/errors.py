"""User-facing errors: one clear line naming the file or key and what is wrong."""


class TokstudyError(Exception):
    """An error caused by input or configuration, reported as one line."""


class VocabSizeError(TokstudyError):
    """A requested vocabulary size the algorithm cannot reach."""


def one_line(error: object) -> str:
    """A message (or an exception) fit for a one-line error: every run of whitespace,
    newlines too, as one space; an exception other than a :class:`TokstudyError` led by
    its type, one without a message given as its ``repr``."""
    message = " ".join(str(error).split())
    if not isinstance(error, BaseException):
        return message
    message = message or repr(error)
    return message if isinstance(error, TokstudyError) else f"{type(error).__name__}: {message}"
