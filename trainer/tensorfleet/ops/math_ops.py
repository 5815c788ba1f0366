"""`math_ops`, TF's module of that name: arithmetic, reductions, comparisons, clipping, in one namespace.

A facade over the modules that define them (`arithmetic_ops`, `reduction_ops`,
`comparison_ops`, `clip_ops`), which import each other one way only; importing
it also installs the Tensor operator overloads (`tensor_operators`). Code in
`ops/` below this facade imports the defining module, not this one.
"""
from __future__ import annotations

from . import tensor_operators as _tensor_operators  # noqa: F401  (installs Tensor.__add__ etc.)
from .arithmetic_ops import *  # noqa: F401,F403
from .arithmetic_ops import __all__ as _arithmetic_all
from .arithmetic_ops import broadcast_like, reduction_grad, sum_to_shape_of  # noqa: F401  (gradient helpers)
from .clip_ops import *  # noqa: F401,F403
from .clip_ops import __all__ as _clip_all
from .comparison_ops import *  # noqa: F401,F403
from .comparison_ops import __all__ as _comparison_all
from .reduction_ops import *  # noqa: F401,F403
from .reduction_ops import __all__ as _reduction_all

__all__ = _arithmetic_all + _reduction_all + _comparison_all + _clip_all
