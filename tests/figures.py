"""The figures the report code draws, caught as it saves them (before it closes them), so
that a test reads what was plotted rather than the size of a file."""

from __future__ import annotations

from types import ModuleType

import matplotlib.pyplot as plt
import pytest
from matplotlib.axis import Axis
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.text import Text
from matplotlib.transforms import Bbox


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


def texts_outside(figure: plt.Figure) -> list[str]:
    """The texts of ``figure`` (its title, each shown panel's title, axis labels, shown tick
    labels and legend) that reach past its edges once drawn as saved: cut off in the image."""
    renderer = drawn(figure).get_renderer()
    bounds = figure.bbox.padded(1)  # a pixel of rounding
    texts = [figure._suptitle] if figure._suptitle is not None else []
    for axis in visible_axes(figure):
        texts += [axis.title, axis.xaxis.label, axis.yaxis.label]
        texts += [label for scale in (axis.xaxis, axis.yaxis) for label in shown_ticklabels(scale)]
        legend = axis.get_legend()
        texts += legend.get_texts() if legend is not None else []
    return [
        text.get_text()
        for text in texts
        if text.get_visible()
        and text.get_text().strip()
        and not _inside(bounds, text.get_window_extent(renderer))
    ]


def _inside(bounds: Bbox, box: Bbox) -> bool:
    return bool(bounds.contains(*box.min) and bounds.contains(*box.max))


def drawn(figure: plt.Figure) -> FigureCanvasAgg:
    """``figure`` drawn on a canvas of its own (a saved figure is closed: it has none)."""
    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    return canvas


def shown_ticklabels(scale: Axis) -> list[Text]:
    """The tick labels of an axis at ticks inside its view (matplotlib keeps labels for
    ticks just outside it, which it does not draw), major and minor."""
    low, high = sorted(scale.get_view_interval())
    pairs = [
        *zip(scale.get_majorticklocs(), scale.get_majorticklabels(), strict=True),
        *zip(scale.get_minorticklocs(), scale.get_minorticklabels(), strict=True),
    ]
    return [label for location, label in pairs if low <= location <= high]


def tick_labels(axis: plt.Axes) -> list[str]:
    """The shown tick labels of both axes of ``axis`` (major and minor), once drawn."""
    drawn(axis.figure)
    return [
        label.get_text()
        for scale in (axis.xaxis, axis.yaxis)
        for label in shown_ticklabels(scale)
        if label.get_visible() and label.get_text()
    ]
