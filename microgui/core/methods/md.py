"""Placeholder: this method module is being written (issue 4). Registers nothing yet."""

__all__: list[str] = []
