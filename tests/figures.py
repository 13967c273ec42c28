"""The figures the report code draws, caught as it saves them (before it closes them), so
that a test reads what was plotted rather than the size of a file."""

from __future__ import annotations

from types import ModuleType

import matplotlib.pyplot as plt
import pytest


def capture_figures(monkeypatch: pytest.MonkeyPatch, *modules: ModuleType) -> list[plt.Figure]:
    """Each figure that the ``save_figure`` of ``modules`` saves, in order (still saved)."""
    figures: list[plt.Figure] = []
    for module in modules:

        def save(figure: plt.Figure, outputs, original=module.save_figure) -> None:
            figures.append(figure)
            original(figure, outputs)

        monkeypatch.setattr(module, "save_figure", save)
    return figures


def visible_axes(figure: plt.Figure) -> list[plt.Axes]:
    """The figure's panels that are shown (the colour bar of a heat map included)."""
    return [axis for axis in figure.axes if axis.get_visible()]


def lines_of(axis: plt.Axes) -> dict[str, tuple[list[float], list[float]]]:
    """Label → (x, y) of each line drawn on ``axis``."""
    return {
        line.get_label(): (
            [float(x) for x in line.get_xdata()],
            [float(y) for y in line.get_ydata()],
        )
        for line in axis.get_lines()
    }
