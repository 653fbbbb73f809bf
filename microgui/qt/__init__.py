"""The Qt layer of microgui (PySide6 + pyqtgraph): thin adapters from user actions to core calls.

Nothing here computes a partition or a metric; see ``microgui.core`` for that (STYLE.md §1).
"""

__all__: list[str] = []
