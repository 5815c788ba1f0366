"""FuncGraph and Function: the sub-graphs that functional control-flow ops (`If`, `While`) hold.

Graph layer, beside `graph.py`. `ops/functional_ops.py` traces a Python
function (a `tf.cond` branch, a `tf.while_loop` body) into a `FuncGraph`: ops
built while it is the default graph land in it, and an input tensor from an
enclosing graph is *captured*: it becomes a Placeholder of the FuncGraph, and the
enclosing tensor becomes an explicit input of the functional op (nested bodies
capture through every level). A `Function` names the FuncGraph's input
placeholders and output tensors; the executor runs it as a sub-plan
(`executor/control_flow_kernels.py`), and `graph_def` ships it inside the op's
attributes (a serialized GraphDef) to remote tasks.
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Optional

from .graph import Graph, Operation, Tensor, _as_operation
from .tensor_shape import TensorShape

#: deepest nesting of function bodies accepted (also when decoding a received GraphDef)
MAX_NESTING = 32


class FuncGraph(Graph):
    """A graph traced from a Python function inside `outer_graph`; outer tensors it reads are captured."""

    def __init__(self, name: str, outer_graph: Graph):
        super().__init__()
        self.name = name
        self.outer_graph = outer_graph
        self.depth = getattr(outer_graph, "depth", 0) + 1
        if self.depth > MAX_NESTING:
            raise ValueError(f"Control-flow function '{name}' is nested more than {MAX_NESTING} levels deep")
        self.captures: dict[Tensor, Tensor] = {}  # tensor of outer_graph -> its placeholder here
        self.outer_controls: list[Operation] = []  # outer ops the body named in tf.control_dependencies
        self.seed = outer_graph.seed
        self._var_scope_store = outer_graph._var_scope_store  # tf.variable_scope names continue inside

    def _enclosing(self) -> list:
        chain, g = [], self.outer_graph
        while g is not None:
            chain.append(g)
            g = getattr(g, "outer_graph", None)
        return chain

    def capture(self, t: Tensor) -> Tensor:
        """The tensor of this graph standing for `t` (a placeholder fed with the outer value)."""
        if t.graph is self:
            return t
        if t.graph not in self._enclosing():
            raise ValueError(f"Tensor {t.name} used in control-flow function '{self.name}' is from an unrelated graph")
        outer = self.outer_graph
        if isinstance(outer, FuncGraph) and t.graph is not outer:
            t = outer.capture(t)
        ph = self.captures.get(t)
        if ph is None:
            ph = self.placeholder(t.dtype, t.shape, "capture")
            self.captures[t] = ph
        return ph

    def placeholder(self, dtype, shape, name: str) -> Tensor:
        with self.name_scope(None), self.control_dependencies(None), self.colocate_with(None, True):
            return super().create_op("Placeholder", [], {"dtype": dtype, "shape": TensorShape(shape)},
                                     name=name)._outputs[0]

    def create_op(self, op_type: str, inputs=(), attrs: Optional[dict] = None, name: Optional[str] = None):
        if op_type == "VariableV2":
            raise ValueError(f"Creating a variable inside the control-flow function '{self.name}' is not supported: "
                             f"create it before tf.cond / tf.while_loop and use it inside")
        inputs = [self.capture(t) if isinstance(t, Tensor) and t.graph is not self else t for t in inputs]
        return super().create_op(op_type, inputs, attrs, name)

    @contextlib.contextmanager
    def control_dependencies(self, control_inputs):
        """As Graph's; outer-graph ops become control inputs of the functional op itself."""
        if control_inputs is None:
            with super().control_dependencies(None):
                yield
            return
        mine = []
        for c in control_inputs:
            op = _as_operation(c)
            if op.graph is self:
                mine.append(op)
            elif op.graph in self._enclosing():
                self._add_outer_control(op)
            else:
                raise ValueError(f"Control input {op.name} is from an unrelated graph")
        with super().control_dependencies(mine):
            yield

    def _add_outer_control(self, op: Operation) -> None:
        outer = self.outer_graph
        if isinstance(outer, FuncGraph) and op.graph is not outer:
            outer._add_outer_control(op)
        elif op not in self.outer_controls:
            self.outer_controls.append(op)


@dataclass(frozen=True, eq=False)
class Function:
    """A callable view of a FuncGraph: feed `inputs` (its placeholders), fetch `outputs`."""

    graph: FuncGraph
    inputs: tuple
    outputs: tuple

    @property
    def name(self) -> str:
        return self.graph.name

    def __repr__(self):
        return f"<Function '{self.name}' {len(self.inputs)} inputs, {len(self.outputs)} outputs>"


def attr_operations(op: Operation) -> list:
    """Operations `op`'s attributes name, including those named inside the bodies it holds (e.g. a variable a
    cond branch assigns): the distributed partitioner ships those variables with the op."""
    out: list = []
    for v in op.attrs.values():
        if isinstance(v, Operation):
            out.append(v)
        elif isinstance(v, Function):
            for inner in v.graph.get_operations():
                out.extend(o for o in attr_operations(inner) if o.graph is not v.graph and o not in out)
    return out


def outermost_graph(g: Graph) -> Graph:
    while isinstance(g, FuncGraph):
        g = g.outer_graph
    return g


@contextlib.contextmanager
def lift_out_of_function(g: Graph):
    """TF's init_scope for a variable created while a body is traced: build it in the outermost graph, under the
    body's current name scope, with no control dependencies (its initializer must not depend on the body)."""
    outer = outermost_graph(g)
    scope = g.get_name_scope()
    with outer.as_default(), outer.name_scope(scope + "/" if scope else None), outer.control_dependencies(None):
        yield outer
