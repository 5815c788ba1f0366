"""Where `tf.keras` keeps its per-process state: the session, the learning phase, variables to initialise and
per-graph name counters (TF 1.15's `keras/backend.py`, graph mode).

- `get_session()` returns the default session (`with sess.as_default()`) when there is one, else a Keras-owned
  `tf.Session(config=ConfigProto(allow_soft_placement=True))` for the default graph (a new one when the graph
  changed), and first initialises every variable Keras created (`track_variable`) that is not initialised yet,
  as Keras 1.15 does (`manual_variable_initialization(True)` turns that off).
- `learning_phase()` is, per graph, `placeholder_with_default(False, shape=(), name='keras_learning_phase')`;
  `set_learning_phase(0|1)` replaces it by a Python int for that graph. `fit` feeds True to the placeholder.
- Layer names (`dense`, `dense_1`, ...) and `get_uid` counters are per graph (`unique_object_name`).
"""
from __future__ import annotations

import collections
import contextlib
import threading
import weakref

from ... import default_graph as _dg
from ...config import ConfigProto
from ...ops import array_ops, state_ops
from ...session import Session

_SESSION = threading.local()
_MANUAL_VAR_INIT = False
# graph -> the learning phase: the placeholder, or 0/1 after set_learning_phase
_GRAPH_LEARNING_PHASES: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
# graph -> the variables Keras created in it (layers' and optimizers' weights, backend.variable)
_GRAPH_VARIABLES: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
# graph -> the tracked variables not yet checked by `get_session` (so each call looks only at new ones)
_GRAPH_PENDING: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
# graph -> {prefix or (namespace, name): count}
PER_GRAPH_OBJECT_NAME_UIDS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def get_graph():
    """The graph Keras builds in: the default graph (graph mode only)."""
    return _dg.get_default_graph()


def name_scope(name, default_name=None, values=None):
    """`tf.keras.backend.name_scope`: `tf.name_scope`."""
    return _dg.name_scope(name, default_name, values)


# -- names ------------------------------------------------------------------------------------------------
def get_default_graph_uid_map():
    graph = get_graph()
    uids = PER_GRAPH_OBJECT_NAME_UIDS.get(graph)
    if uids is None:
        uids = PER_GRAPH_OBJECT_NAME_UIDS[graph] = collections.defaultdict(int)
    return uids


def get_uid(prefix=""):
    """1, 2, 3, ... per prefix and graph (`Input` names `input_1`, `input_2`, ... with it)."""
    uids = get_default_graph_uid_map()
    uids[prefix] += 1
    return uids[prefix]


def reset_uids():
    PER_GRAPH_OBJECT_NAME_UIDS.clear()


def unique_object_name(name, name_uid_map=None, avoid_names=None, namespace="", zero_based=False):
    """`name`, `name_1`, ... (zero_based) or `name_1`, `name_2`, ..., unique per graph and namespace."""
    if name_uid_map is None:
        name_uid_map = get_default_graph_uid_map()
    avoid_names = avoid_names or set()
    proposed = None
    while proposed is None or proposed in avoid_names:
        key = (namespace, name)
        if zero_based:
            number = name_uid_map[key]
            proposed = f"{name}_{number}" if number else name
            name_uid_map[key] += 1
        else:
            name_uid_map[key] += 1
            proposed = f"{name}_{name_uid_map[key]}"
    return proposed


# -- learning phase -----------------------------------------------------------------------------------------
def symbolic_learning_phase():
    graph = get_graph()
    phase = _GRAPH_LEARNING_PHASES.get(graph)
    if phase is None:
        with graph.as_default(), graph.name_scope(None):
            phase = array_ops.placeholder_with_default(False, shape=(), name="keras_learning_phase")
        _GRAPH_LEARNING_PHASES[graph] = phase
    return phase


def learning_phase():
    """The learning phase of the default graph: a bool placeholder (default False) or the int set for it."""
    return symbolic_learning_phase()


def set_learning_phase(value):
    """Fixes the learning phase of the default graph to 0 (test) or 1 (train)."""
    if value not in {0, 1}:
        raise ValueError("Expected learning phase to be 0 or 1.")
    _GRAPH_LEARNING_PHASES[get_graph()] = value


def global_learning_phase_is_set():
    """False in graph mode: a set learning phase is read through `learning_phase()` (TF 1.15)."""
    return False


@contextlib.contextmanager
def learning_phase_scope(value):
    """Sets the learning phase of the default graph to `value` inside the block, then restores it."""
    if value not in {0, 1}:
        raise ValueError("Expected learning phase to be 0 or 1.")
    graph = get_graph()
    previous = _GRAPH_LEARNING_PHASES.get(graph)
    _GRAPH_LEARNING_PHASES[graph] = value
    try:
        yield
    finally:
        if previous is None:
            _GRAPH_LEARNING_PHASES.pop(graph, None)
        else:
            _GRAPH_LEARNING_PHASES[graph] = previous


# -- variables and the session ----------------------------------------------------------------------------
def track_variable(v):
    """Records a variable Keras created so that `get_session()` initialises it."""
    graph = v.graph if hasattr(v, "graph") else get_graph()
    if graph not in _GRAPH_VARIABLES:
        _GRAPH_VARIABLES[graph] = weakref.WeakSet()
    _GRAPH_VARIABLES[graph].add(v)
    if not getattr(v, "_keras_initialized", False):
        _GRAPH_PENDING.setdefault(graph, weakref.WeakSet()).add(v)


def manual_variable_initialization(value):
    """True: `get_session()` leaves variable initialisation to the user."""
    global _MANUAL_VAR_INIT
    _MANUAL_VAR_INIT = value


def get_default_session_config():
    return ConfigProto(allow_soft_placement=True)


def _current_graph(op_input_list):
    for x in op_input_list or ():
        graph = getattr(x, "graph", None)
        if graph is not None:
            return graph
    return get_graph()


def _get_session(op_input_list=()):
    session = _dg.get_default_session()
    if session is not None:
        return session
    held = getattr(_SESSION, "session", None)
    graph = _current_graph(op_input_list)
    if held is None or held.graph is not graph or held._closed:
        with graph.as_default():
            held = _SESSION.session = Session(config=get_default_session_config())
    return held


def _initialize_variables(session):
    pending = _GRAPH_PENDING.get(session.graph)
    if not pending:
        return
    candidates = [v for v in list(pending) if not getattr(v, "_keras_initialized", False)]
    pending.clear()
    if not candidates:
        return
    with session.graph.as_default():
        flags = session.run([state_ops.is_variable_initialized(v) for v in candidates])
        uninitialized = []
        for flag, v in zip(flags, candidates):
            if not flag:
                uninitialized.append(v)
            v._keras_initialized = True
        if uninitialized:
            session.run(state_ops.variables_initializer(uninitialized))


def get_session(op_input_list=()):
    """The session Keras runs in (see the module doc); uninitialised Keras variables get initialised first."""
    session = _get_session(op_input_list)
    if not _MANUAL_VAR_INIT:
        _initialize_variables(session)
    return session


def set_session(session):
    """Makes `session` the Keras session (used when no default session is set)."""
    _SESSION.session = session


def clear_session():
    """Resets the default graph, the name counters and the Keras session; a new learning-phase placeholder."""
    _dg.reset_default_graph()
    reset_uids()
    _SESSION.session = None
    graph = get_graph()
    _GRAPH_LEARNING_PHASES.pop(graph, None)
    _GRAPH_VARIABLES.pop(graph, None)
    _GRAPH_PENDING.pop(graph, None)
    symbolic_learning_phase()
