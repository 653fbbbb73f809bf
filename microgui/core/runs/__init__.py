"""Running a protection: the run itself and what drives runs.

- :mod:`~microgui.core.runs.spec`: :class:`RunSpec` (every parameter of a run; its plan of
  :class:`MethodStep` steps) and :class:`RunResult`, the parsing of k and seeds;
- :mod:`~microgui.core.runs.protect`: :func:`run_protection` (what the command line, the API
  and the app all call) and the run's report;
- :mod:`~microgui.core.runs.scale` (strata and blocks) and :mod:`~microgui.core.runs.pool`
  (its process pool); :mod:`~microgui.core.runs.sweep` (grids of runs);
  :mod:`~microgui.core.runs.analysis` (the measures and views computed around a run);
  :mod:`~microgui.core.runs.project_file` (saved projects).

The names of the former module ``microgui.core.runs`` are re-exported here.
"""

from microgui.core.runs.protect import (
    build_report,
    check_kinds,
    kind_refusal,
    method_refusal,
    run_protection,
)
from microgui.core.runs.spec import (
    MAX_SEED,
    MethodStep,
    RunResult,
    RunSpec,
    Step,
    information_loss_text,
    parse_k,
    parse_seed,
    validate_k,
)

__all__ = [
    "RunSpec",
    "RunResult",
    "MethodStep",
    "Step",
    "run_protection",
    "parse_k",
    "parse_seed",
    "MAX_SEED",
    "validate_k",
    "build_report",
    "information_loss_text",
    "kind_refusal",
    "method_refusal",
    "check_kinds",
]
