"""Optimizers and schedules with optax's API: `import didax.optim as optim; optim.adam(1e-3)`.

An optimizer is a `GradientTransformation`, a pair of pure functions `init(params)` and
`update(grads, state, params=None)`, built by chaining small transformations; its state is a
pytree, so training steps work under `didax.jit`, `didax.vmap` and `didax.grad`.
"""
from didax._src.optim.alias import (  # noqa: F401
    adabelief,
    adagrad,
    adam,
    adamax,
    adamw,
    amsgrad,
    lion,
    nadam,
    nadamw,
    optimistic_gradient_descent,
    rmsprop,
    sgd,
    sign_sgd,
)
from didax._src.optim.base import (  # noqa: F401
    EmptyState,
    GradientTransformation,
    GradientTransformationExtraArgs,
    apply_updates,
    chain,
    identity,
    incremental_update,
    init_empty_state,
    named_chain,
    set_to_zero,
    stateless,
    stateless_with_tree_map,
    with_extra_args_support,
)
from didax._src.optim.clipping import clip, clip_by_block_rms, clip_by_global_norm  # noqa: F401
from didax._src.optim.masking import MaskedNode, MaskedState, masked  # noqa: F401
from didax._src.optim.numerics import global_norm, safe_increment  # noqa: F401
from didax._src.optim.sam import SAMState, normalize, sam, sam_gradient  # noqa: F401
from didax._src.optim.scaling import (  # noqa: F401
    ScaleByScheduleState,
    WeightDecaySchedule,
    add_decayed_weights,
    scale,
    scale_by_learning_rate,
    scale_by_schedule,
    scale_by_sign,
)
from didax._src.optim.schedules import (  # noqa: F401
    constant_schedule,
    cosine_decay_schedule,
    cosine_onecycle_schedule,
    exponential_decay,
    join_schedules,
    linear_onecycle_schedule,
    linear_schedule,
    piecewise_constant_schedule,
    piecewise_interpolate_schedule,
    polynomial_schedule,
    sgdr_schedule,
    warmup_constant_schedule,
    warmup_cosine_decay_schedule,
    warmup_exponential_decay_schedule,
)
from didax._src.optim.transforms import (  # noqa: F401
    EmaState,
    ScaleByAdamState,
    ScaleByAmsgradState,
    ScaleByBeliefState,
    ScaleByLionState,
    ScaleByOptimisticGradientState,
    ScaleByRmsState,
    ScaleByRmsWithCountState,
    ScaleByRssState,
    ScaleByRStdDevState,
    ScaleByRStdDevWithCountState,
    TraceState,
    ema,
    scale_by_adam,
    scale_by_adamax,
    scale_by_amsgrad,
    scale_by_belief,
    scale_by_lion,
    scale_by_optimistic_gradient,
    scale_by_rms,
    scale_by_rss,
    scale_by_stddev,
    trace,
)

safe_int32_increment = safe_increment
