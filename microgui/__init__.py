"""microgui: microaggregation for statistical disclosure control.

The package root imports nothing from Qt; ``microgui.protect`` is the notebook API.
"""

from microgui._version import __version__
from microgui.api import ProtectionResult, UnsafeReleaseWarning, protect

__all__ = ["__version__", "protect", "ProtectionResult", "UnsafeReleaseWarning"]
