"""The Qt-free geometry of what the app draws: :mod:`~microgui.core.views.projection` (the PCA
projection and category transitions), :mod:`~microgui.core.views.layout` (tree and MST layouts)
and :mod:`~microgui.core.views.ru_frame` (the risk-utility chart's frame).

Nothing is imported here, so that importing one module loads only what it needs.
"""

__all__: list[str] = []
