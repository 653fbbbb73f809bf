"""The table and what describes it: :mod:`~microgui.core.table.dataset` (the frame and its
quasi-identifier matrix), :mod:`~microgui.core.table.roles`, :mod:`~microgui.core.table.hierarchy`
(generalization hierarchies), :mod:`~microgui.core.table.numbers` (how numbers are written),
:mod:`~microgui.core.table.dependency` (dependency trees of the quasi-identifiers) and
:mod:`~microgui.core.table.aggregate` (group means and modes).

Nothing is imported here, so that importing one module loads only what it needs.
"""

__all__: list[str] = []
