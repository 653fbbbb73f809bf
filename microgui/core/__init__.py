"""The core of microgui: plain Python (numpy, pandas, networkx, scipy), never Qt."""

__all__: list[str] = []
