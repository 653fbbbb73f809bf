"""pyqtgraph views of runs (STYLE.md §7: one item per layer, shared brushes, sampled above 100k)."""

__all__: list[str] = []
