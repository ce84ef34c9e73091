"""Code the passes share, registering nothing: TOSA builders, reading torch-dialect values,
conv1d emission, layout algebra, the one recurrence (recurrent/) and the INT numerics
(integer/). A lowering builds TOSA at a matched op and raises UnsupportedError for what
it cannot express.
"""
