"""The object graph of a Keras model, as TF 1.15's object-based checkpoints record it (what `model.save_weights`
writes in TensorFlow format and `load_weights` matches; training/tracking/graph_view.py and util.py in TF).

Objects and their named children ("dependencies"):
- a Sequential or functional model: for each layer of `_layers` (the InputLayer included) in order,
  `layer_with_weights-<k>` (k counts the layers that have weights) and `layer-<i>`; then `optimizer` when
  compiled with a Keras optimizer;
- a subclassed model or any other layer: its own weights by the name given to `add_weight` (`kernel`, `bias`,
  `moving_mean`, ...), then the layers and variables assigned as attributes, by attribute name (a list of
  layers is a node whose children are `0`, `1`, ...); a subclassed model then `optimizer`;
- a Keras optimizer: `iter` and its hyper-parameter variables (`beta_1`, `beta_2`, `decay`, `learning_rate`,
  ...); its slots are not children but `slot_variables` of the optimizer's node.
Node ids are a breadth-first walk from the model (node 0); an object's path is the first path reaching it, its
names escaped ('.' -> '..', '/' -> '.S'); a variable's checkpoint key is `<path>/.ATTRIBUTES/VARIABLE_VALUE`
and a slot's `<variable path>/.OPTIMIZER_SLOT/<optimizer path>/<slot>/.ATTRIBUTES/VARIABLE_VALUE`
(`layer_with_weights-0/kernel/.OPTIMIZER_SLOT/optimizer/m/.ATTRIBUTES/VARIABLE_VALUE`).
"""
from __future__ import annotations

from ...ops.state_ops import Variable
from ...protos.trackable_object_graph_pb2 import TrackableObjectGraph
from ..engine.base_layer import Layer
from ..optimizers.optimizer_v2 import OptimizerV2

OBJECT_GRAPH_KEY = "_CHECKPOINTABLE_OBJECT_GRAPH"
VARIABLE_VALUE = "VARIABLE_VALUE"


class ListNode:
    """A list (or tuple) of layers/variables held in an attribute: a node whose children are its indices."""

    def __init__(self, items):
        self.items = list(items)


def escape_local_name(name: str) -> str:
    return name.replace(".", "..").replace("/", ".S")


def weight_local_name(variable) -> str:
    """The name a layer tracks its weight by: the `name` given to `add_weight` (the last part of the op name)."""
    return variable.op.name.rsplit("/", 1)[-1]


def _tracks_layers_by_index(layer) -> bool:
    from ..engine.sequential import Sequential
    return isinstance(layer, Sequential) or bool(layer.__dict__.get("_is_graph_network"))


def children(obj) -> list:
    """[(local name, child object)] in the order TF 1.15 tracks them."""
    if isinstance(obj, ListNode):
        return [(str(i), item) for i, item in enumerate(obj.items)]
    if isinstance(obj, OptimizerV2):
        counter = [("iter", obj._iterations)] if obj._iterations is not None else []
        return counter + [(name, value) for name, value in sorted(obj._hyper.items()) if isinstance(value, Variable)]
    if not isinstance(obj, Layer):
        return []
    out: list = []
    if _tracks_layers_by_index(obj):
        k = 0
        for i, layer in enumerate(obj._layers):
            if layer.weights:
                out.append((f"layer_with_weights-{k}", layer))
                k += 1
            out.append((f"layer-{i}", layer))
    else:
        for variable in obj._trainable_weights + obj._non_trainable_weights:
            out.append((weight_local_name(variable), variable))
        for name in obj.__dict__.get("_tracked_attribute_names", ()):
            value = obj.__dict__.get(name)
            child: object
            if isinstance(value, (Layer, Variable)):
                child = value
            elif isinstance(value, (list, tuple)) and value and all(isinstance(v, (Layer, Variable)) for v in value):
                child = ListNode(value)
            else:
                continue
            if not any(n == name and c is child for n, c in out):
                out.append((name, child))
    optimizer = obj.__dict__.get("optimizer")
    if isinstance(optimizer, OptimizerV2):
        out.append(("optimizer", optimizer))
    return out


class ObjectGraph:
    """The breadth-first walk of a model's object graph: `objects` (node id order), `paths`, `children_ids`."""

    def __init__(self, root):
        self.objects = [root]
        self.paths = {id(root): ""}
        self.children_ids: list = []
        position = {id(root): 0}
        i = 0
        while i < len(self.objects):
            obj = self.objects[i]
            refs = []
            for name, child in children(obj):
                if id(child) not in position:
                    position[id(child)] = len(self.objects)
                    self.objects.append(child)
                    parent = self.paths[id(obj)]
                    self.paths[id(child)] = (parent + "/" if parent else "") + escape_local_name(name)
                refs.append((position[id(child)], name))
            self.children_ids.append(refs)
            i += 1
        self.position = position
        self.optimizers = [o for o in self.objects if isinstance(o, OptimizerV2)]

    def variable_key(self, variable) -> str:
        return f"{self.paths[id(variable)]}/.ATTRIBUTES/{VARIABLE_VALUE}"

    def slot_key(self, variable, optimizer, slot_name) -> str:
        return (f"{self.paths[id(variable)]}/.OPTIMIZER_SLOT/{self.paths[id(optimizer)]}/"
                f"{escape_local_name(slot_name)}/.ATTRIBUTES/{VARIABLE_VALUE}")

    def slots(self, optimizer) -> list:
        """[(original variable, slot name, slot variable)]: per slot name, per variable in node order."""
        out = []
        for slot_name in optimizer.get_slot_names():
            for obj in self.objects:
                if isinstance(obj, Variable):
                    slot = optimizer._slots.get(obj.op.name, {}).get(slot_name)
                    if slot is not None:
                        out.append((obj, slot_name, slot))
        return out

    def serialize(self) -> tuple:
        """(TrackableObjectGraph proto, {checkpoint key: variable}) for every variable reachable, slots included."""
        proto = TrackableObjectGraph()
        keyed: dict = {}
        for obj, refs in zip(self.objects, self.children_ids):
            node = proto.nodes.add()
            for node_id, name in refs:
                node.children.add(node_id=node_id, local_name=name)
            if isinstance(obj, Variable):
                key = self.variable_key(obj)
                node.attributes.add(name=VARIABLE_VALUE, full_name=obj.op.name, checkpoint_key=key)
                keyed[key] = obj
        for optimizer in self.optimizers:
            opt_node = proto.nodes[self.position[id(optimizer)]]
            for variable, slot_name, slot in self.slots(optimizer):
                slot_id = len(proto.nodes)
                key = self.slot_key(variable, optimizer, slot_name)
                proto.nodes.add().attributes.add(name=VARIABLE_VALUE, full_name=slot.op.name, checkpoint_key=key)
                opt_node.slot_variables.add(original_variable_node_id=self.position[id(variable)],
                                            slot_name=slot_name, slot_variable_node_id=slot_id)
                keyed[key] = slot
        return proto, keyed
