"""The units of inference over a table of cells (tokenizers, each measured in several
cells): each unit's cells in stratum order, the block it is exchanged within, and the
relabelling of a value column that a permutation of units within their blocks makes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd


@dataclass(frozen=True)
class Units:
    """The units (sorted by name): ``clusters[u]`` holds unit ``u``'s cells in stratum
    order, ``blocks[u]`` the block it is exchanged within; the units of a block have their
    cells in the same strata."""

    clusters: list[np.ndarray]
    blocks: list[str]

    @classmethod
    def of(
        cls, names: Sequence, strata: Sequence, blocks: Mapping[str, str] | None = None
    ) -> Units:
        """The units of cells named ``names`` (one per cell) in ``strata``; a unit's block
        is ``blocks[name]``, by default its strata (units measured in the same strata).
        :class:`ValueError` when two units of a block are not in the same strata."""
        names, strata = np.asarray(names, dtype=str), np.asarray(strata, dtype=str)
        clusters = [np.flatnonzero(names == name) for name in sorted(set(names))]
        clusters = [cells[np.argsort(strata[cells], kind="stable")] for cells in clusters]
        layouts = ["/".join(strata[cells]) for cells in clusters]
        if blocks is None:
            return cls(clusters, layouts)
        chosen = [str(blocks[str(names[cells[0]])]) for cells in clusters]
        for block in set(chosen):
            if len({layout for layout, b in zip(layouts, chosen, strict=True) if b == block}) > 1:
                raise ValueError(f"the units of block {block!r} are not in the same strata")
        return cls(clusters, chosen)

    def relabelled(self, values: np.ndarray, orders: np.ndarray) -> np.ndarray:
        """``values`` (one per cell) with unit ``u``'s cells given unit ``orders[..., u]``'s,
        for each ordering along the leading axes of ``orders`` (``(..., cells)``)."""
        values, orders = np.asarray(values, dtype=float), np.asarray(orders, dtype=int)
        width = max(len(cells) for cells in self.clusters)
        table = np.full((len(self.clusters), width), -1)
        for unit, cells in enumerate(self.clusters):
            table[unit, : len(cells)] = cells
        present = table >= 0
        moved = np.array(np.broadcast_to(values, (*orders.shape[:-1], len(values))))
        moved[..., table[present]] = values[table[orders][..., present]]
        return moved

    def informative(self) -> int:
        """How many units share their block with another: the ones a permutation or a
        resample can exchange."""
        counts = pd.Series(self.blocks).value_counts()
        return int(sum(counts[block] > 1 for block in self.blocks))
