"""Progress of long work in its log: ``tqdm`` lines (done, rate, elapsed and time left)
written as log records, at most one every :data:`INTERVAL` seconds.

:func:`progress` wraps work of a known size (training steps, lines to score, batches to
translate): its line reads ``training: 40% 120/300 [00:41<01:02,  2.93step/s], loss 4.1`` (done,
elapsed, time left, rate and what the work adds).
:func:`heartbeat` wraps one long call that reports nothing itself (a library's tokenizer
training): a line every :data:`INTERVAL` seconds says how long it has run. In a workflow
job the records go to the rule's log (:func:`tokstudy.workflow.dispatch.run_step`), so
``tail -f results/logs/<rule>/…`` and ``tokstudy status`` show them.
"""

from __future__ import annotations

import contextlib
import io
import logging
import threading
from collections.abc import Iterator

from tqdm import tqdm

#: seconds between two progress lines of one piece of work (a line at least this often
#: while it moves, and one when it starts and ends)
INTERVAL = 10.0
#: the parts of tqdm's line a log needs: no bar, which a log cannot redraw
LINE = "{desc}: {percentage:3.0f}% {n_fmt}/{total_fmt} [{elapsed}<{remaining}, {rate_fmt}]{postfix}"
#: the line of work of unknown size
OPEN_LINE = "{desc}: {n_fmt} done [{elapsed}, {rate_fmt}]{postfix}"


class _LogStream(io.StringIO):
    """The file tqdm writes to: each line it draws becomes one record of ``logger``."""

    def __init__(self, logger: logging.Logger) -> None:
        super().__init__()
        self.logger = logger

    def write(self, text: str) -> int:
        line = text.strip("\r\n\x1b[A ")
        if line:
            self.logger.info("%s", line)
        return len(text)

    def flush(self) -> None:
        """Nothing to flush: every line is a record already."""


def progress(
    total: int | None,
    description: str,
    logger: logging.Logger,
    *,
    unit: str = "it",
    initial: int = 0,
    interval: float | None = None,
    disable: bool = False,
) -> tqdm:
    """A ``tqdm`` counter of ``total`` units (``None``: unknown) that logs to ``logger``:
    one line when it starts, then at most one every ``interval`` seconds as
    :meth:`~tqdm.tqdm.update` is called, and one when it is closed (use it as a context
    manager). ``initial``: units already done (a resumed run); ``disable``: log nothing (a
    worker process other than the first); ``interval``: :data:`INTERVAL` unless given."""
    interval = INTERVAL if interval is None else interval
    return tqdm(
        total=total,
        desc=description,
        unit=unit,
        initial=initial,
        file=_LogStream(logger),
        mininterval=interval,
        maxinterval=interval,
        miniters=1,
        bar_format=LINE if total else OPEN_LINE,
        ascii=True,
        dynamic_ncols=False,
        disable=disable,
    )


@contextlib.contextmanager
def heartbeat(
    description: str, logger: logging.Logger, interval: float | None = None
) -> Iterator[None]:
    """Log ``description: <elapsed> elapsed`` every ``interval`` seconds (:data:`INTERVAL`
    unless given) while the block runs (a call that reports no progress itself), and once
    when it ends."""
    interval = INTERVAL if interval is None else interval
    bar = tqdm(
        total=None,
        desc=description,
        file=_LogStream(logger),
        bar_format="{desc}: {elapsed} elapsed",
        mininterval=interval,
        ascii=True,
    )
    done = threading.Event()

    def beat() -> None:
        while not done.wait(interval):
            bar.refresh()

    beating = threading.Thread(target=beat, name="tokstudy-heartbeat", daemon=True)
    beating.start()
    try:
        yield
    finally:
        done.set()
        beating.join()
        bar.close()
