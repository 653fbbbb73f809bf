"""Protection plans (issue 31): an ordered list of steps on one table — global recoding,
top/bottom coding, microaggregation on chosen quasi-identifiers, local suppression — one spec
(versioned JSON: :mod:`~microgui.core.runs.plan.spec`), one run (:func:`run_plan`:
:mod:`~microgui.core.runs.plan.run`) and one release, verified once."""

from microgui.core.runs.plan.run import (
    PLAN_METHOD,
    PlanResult,
    plan_k_level,
    plan_problems,
    plan_spec,
    plan_suppresses,
    run_plan,
    run_spec,
    spec_plan,
)
from microgui.core.runs.plan.spec import (
    MAX_STEPS,
    PLAN_VERSION,
    MicroaggregateStep,
    Plan,
    PlanStep,
    RecodeStep,
    SuppressStep,
    TopBottomStep,
    load_plan,
    plan_from_json,
    resolve_plan,
)

__all__ = [
    "MAX_STEPS",
    "PLAN_METHOD",
    "PLAN_VERSION",
    "MicroaggregateStep",
    "Plan",
    "PlanResult",
    "PlanStep",
    "RecodeStep",
    "SuppressStep",
    "TopBottomStep",
    "load_plan",
    "plan_from_json",
    "plan_k_level",
    "plan_problems",
    "plan_spec",
    "plan_suppresses",
    "run_spec",
    "spec_plan",
    "resolve_plan",
    "run_plan",
]
