"""Figure layout shared by every plot: a grid of panels, and saving a figure reproducibly
(PDFs without a creation date)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

PANEL_COLUMNS = 3


def panel_grid(panels: int) -> tuple[plt.Figure, np.ndarray]:
    """A figure of ``panels`` axes, at most three a row; the unused axes hidden."""
    columns = min(PANEL_COLUMNS, panels)
    rows = math.ceil(panels / columns)
    figure, axes = plt.subplots(rows, columns, figsize=(4.2 * columns, 3.2 * rows), squeeze=False)
    for extra in axes.flat[panels:]:
        extra.set_visible(False)
    return figure, axes


def save_figure(figure: plt.Figure, outputs: Sequence[Path]) -> None:
    """Save ``figure`` to every output (PNG and PDF alike), then close it."""
    figure.tight_layout(rect=(0, 0, 1, 0.96))
    for output in outputs:
        figure.savefig(
            output,
            dpi=120,
            metadata={"CreationDate": None} if str(output).endswith(".pdf") else None,
        )
    plt.close(figure)
