"""Information loss and disclosure risk measures: pure functions of arrays and frames."""

from microgui.core.metrics.information_loss import information_loss, sse, sst
from microgui.core.metrics.kanonymity import group_sizes, k_anonymity_level

__all__ = ["sse", "sst", "information_loss", "group_sizes", "k_anonymity_level"]
