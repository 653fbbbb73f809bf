"""Version of microgui (the one place it is kept: pyproject.toml reads it, dynamic = ["version"])."""

__all__ = ["__version__"]

__version__ = "0.2.0"
