"""Lazy Qt item models over core objects (no data copied into items)."""

__all__: list[str] = []
