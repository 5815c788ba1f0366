"""`tf.contrib.framework`: `arg_scope`/`add_arg_scope`, (model) variables and their lookups, the global step,
and initializing variables from checkpoints (TF 1.15's contrib/framework names and semantics).

Modules: `arg_scope` (the default-argument scopes), `variables` (creating and finding variables; the
global-step helpers are `tf.train`'s), `checkpoint_assign` (assign_from_checkpoint(_fn),
assign_from_values(_fn)). The checkpoint readers are `tf.train`'s, re-exported as TF 1.15 did.
"""
from ...train.checkpoint_utils import init_from_checkpoint, list_variables, load_checkpoint, load_variable
from .arg_scope import add_arg_scope, arg_scope, arg_scoped_arguments, current_arg_scope, has_arg_scope
from .checkpoint_assign import (assign_from_checkpoint, assign_from_checkpoint_fn, assign_from_values,
                                assign_from_values_fn)
from .variables import (VariableDeviceChooser, add_model_variable, assert_global_step, assert_or_get_global_step,
                        create_global_step, filter_variables, get_global_step, get_local_variables,
                        get_model_variables, get_or_create_global_step, get_trainable_variables, get_unique_variable,
                        get_variable_full_name, get_variables, get_variables_by_name, get_variables_by_suffix,
                        get_variables_to_restore, global_variable, local_variable, model_variable, variable)

__all__ = ["add_arg_scope", "arg_scope", "arg_scoped_arguments", "current_arg_scope", "has_arg_scope",
           "assign_from_checkpoint", "assign_from_checkpoint_fn", "assign_from_values", "assign_from_values_fn",
           "VariableDeviceChooser", "add_model_variable", "assert_global_step", "assert_or_get_global_step",
           "create_global_step", "filter_variables", "get_global_step", "get_local_variables", "get_model_variables",
           "get_or_create_global_step", "get_trainable_variables", "get_unique_variable", "get_variable_full_name",
           "get_variables", "get_variables_by_name", "get_variables_by_suffix", "get_variables_to_restore",
           "global_variable", "local_variable", "model_variable", "variable", "init_from_checkpoint",
           "list_variables", "load_checkpoint", "load_variable"]
