"""The canned estimators' optimizer argument: a name ('Adagrad', 'Adam', 'Ftrl', 'RMSProp', 'SGD') with the
estimator's default learning rate, an Optimizer instance, or a callable returning one (TF 1.15's
`optimizers.get_optimizer_instance`); and the train op that also runs the graph's UPDATE_OPS."""
from __future__ import annotations

from ...default_graph import control_dependencies, get_collection
from ...graph import GraphKeys
from ...train.adagrad import AdagradOptimizer
from ...train.adam import AdamOptimizer
from ...train.ftrl import FtrlOptimizer
from ...train.gradient_descent import GradientDescentOptimizer
from ...train.optimizer import Optimizer
from ...train.rmsprop import RMSPropOptimizer

__all__: list = []

_OPTIMIZER_CLS_NAMES = {"Adagrad": AdagradOptimizer, "Adam": AdamOptimizer, "Ftrl": FtrlOptimizer,
                        "RMSProp": RMSPropOptimizer, "SGD": GradientDescentOptimizer}


def get_optimizer_instance(opt, learning_rate=None):
    if isinstance(opt, str):
        if opt in _OPTIMIZER_CLS_NAMES:
            if learning_rate is None:
                raise ValueError("learning_rate must be specified when opt is string.")
            return _OPTIMIZER_CLS_NAMES[opt](learning_rate=learning_rate)
        raise ValueError(f"Unsupported optimizer name: {opt}. Supported names are: "
                         f"{tuple(sorted(_OPTIMIZER_CLS_NAMES))}")
    if callable(opt) and not isinstance(opt, Optimizer):
        opt = opt()
    if not isinstance(opt, Optimizer):
        raise ValueError(f"The given object is not an Optimizer instance. Given: {opt}")
    return opt


def minimize_with_update_ops(optimizer, loss, global_step, var_list=None):
    update_ops = get_collection(GraphKeys.UPDATE_OPS)
    with control_dependencies(update_ops):
        return optimizer.minimize(loss, global_step=global_step, var_list=var_list)
