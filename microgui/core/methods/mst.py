"""Placeholder: the `mst` method is being written (issue 3). Registers nothing yet."""

__all__: list[str] = []
