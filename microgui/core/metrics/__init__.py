"""Information loss and disclosure risk measures: pure functions of arrays and frames."""

from microgui.core.metrics.information_loss import information_loss, sse, sst
from microgui.core.metrics.kanonymity import group_sizes, k_anonymity_level

__all__ = ["sse", "sst", "information_loss", "group_sizes", "k_anonymity_level"]

# Attribute disclosure (p-sensitivity, l-diversity, t-closeness): issue 4.
from microgui.core.metrics.privacy import (  # noqa: E402
    distinct_l_diversity,
    emd_equal,
    emd_ordered,
    p_sensitivity,
    t_closeness,
)

__all__ += ["p_sensitivity", "distinct_l_diversity", "emd_ordered", "emd_equal", "t_closeness"]

# Attribute disclosure per confidential attribute and the release verdict: issue 29.
from microgui.core.metrics.disclosure import (  # noqa: E402
    Verdict,
    attribute_disclosure,
    release_verdict,
)

__all__ += ["attribute_disclosure", "Verdict", "release_verdict"]
