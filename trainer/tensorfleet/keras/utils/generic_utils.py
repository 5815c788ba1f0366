"""Keras's object (de)serialization and small helpers (TF 1.15's keras/utils/generic_utils.py).

`serialize_keras_object` gives `{'class_name', 'config'}` for objects with `get_config`, the `__name__` of
functions; `deserialize_keras_object` resolves a name or such a dict against custom objects (the argument,
then `custom_object_scope` / `get_custom_objects()`), then the module's own table. Nothing is evaluated:
names are looked up in dicts.
"""
from __future__ import annotations

import inspect
import re

_GLOBAL_CUSTOM_OBJECTS: dict = {}


class CustomObjectScope:
    """`with custom_object_scope({'MyLayer': MyLayer}):` makes the names resolvable inside the block."""

    def __init__(self, *args):
        self.custom_objects = args
        self.backup = None

    def __enter__(self):
        self.backup = _GLOBAL_CUSTOM_OBJECTS.copy()
        for objects in self.custom_objects:
            _GLOBAL_CUSTOM_OBJECTS.update(objects)
        return self

    def __exit__(self, *args):
        _GLOBAL_CUSTOM_OBJECTS.clear()
        _GLOBAL_CUSTOM_OBJECTS.update(self.backup)


def custom_object_scope(*args):
    return CustomObjectScope(*args)


def get_custom_objects():
    """The global dict of custom objects (mutable, as in Keras)."""
    return _GLOBAL_CUSTOM_OBJECTS


def serialize_keras_class_and_config(cls_name, cls_config):
    return {"class_name": cls_name, "config": cls_config}


def serialize_keras_object(instance):
    if instance is None:
        return None
    if hasattr(instance, "get_config"):
        return serialize_keras_class_and_config(instance.__class__.__name__, instance.get_config())
    if hasattr(instance, "__name__"):
        return instance.__name__
    raise ValueError("Cannot serialize", instance)


def class_and_config_for_serialized_keras_object(config, module_objects=None, custom_objects=None,
                                                 printable_module_name="object"):
    if not isinstance(config, dict) or "class_name" not in config or "config" not in config:
        raise ValueError("Improper config format: " + str(config))
    class_name = config["class_name"]
    if custom_objects and class_name in custom_objects:
        cls = custom_objects[class_name]
    elif class_name in _GLOBAL_CUSTOM_OBJECTS:
        cls = _GLOBAL_CUSTOM_OBJECTS[class_name]
    else:
        cls = (module_objects or {}).get(class_name)
        if cls is None:
            raise ValueError("Unknown " + printable_module_name + ": " + class_name)
    return cls, config["config"]


def deserialize_keras_object(identifier, module_objects=None, custom_objects=None, printable_module_name="object"):
    """A config dict -> `cls.from_config(config)` (or `cls(**config)`); a name -> the object (classes are
    instantiated without arguments, functions returned as they are)."""
    if identifier is None:
        return None
    if isinstance(identifier, dict):
        cls, cls_config = class_and_config_for_serialized_keras_object(identifier, module_objects, custom_objects,
                                                                       printable_module_name)
        custom_objects = custom_objects or {}
        if hasattr(cls, "from_config"):
            if "custom_objects" in inspect.signature(cls.from_config).parameters:
                return cls.from_config(cls_config, custom_objects={**_GLOBAL_CUSTOM_OBJECTS, **custom_objects})
            with CustomObjectScope(custom_objects):
                return cls.from_config(cls_config)
        with CustomObjectScope(custom_objects):
            return cls(**cls_config)
    if isinstance(identifier, str):
        if custom_objects and identifier in custom_objects:
            obj = custom_objects.get(identifier)
        elif identifier in _GLOBAL_CUSTOM_OBJECTS:
            obj = _GLOBAL_CUSTOM_OBJECTS[identifier]
        else:
            obj = (module_objects or {}).get(identifier)
            if obj is None:
                raise ValueError("Unknown " + printable_module_name + ":" + identifier)
        return obj() if inspect.isclass(obj) else obj
    raise ValueError("Could not interpret serialized " + printable_module_name + ": " + str(identifier))


def get_from_identifier(identifier, deserialize, what):
    """The `get` of initializers and constraints: None -> None; a config dict or a name (an instance of the
    class or function it names, built without arguments) -> `deserialize`; a callable -> itself."""
    if identifier is None:
        return None
    if isinstance(identifier, dict):
        return deserialize(identifier)
    if isinstance(identifier, str):
        return deserialize({"class_name": str(identifier), "config": {}})
    if callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret {what} identifier: {identifier}")


def to_snake_case(name):
    """'MaxPooling2D' -> 'max_pooling2d', 'Dense' -> 'dense' (private classes get a 'private' prefix)."""
    intermediate = re.sub("(.)([A-Z][a-z0-9]+)", r"\1_\2", name)
    insecure = re.sub("([a-z])([A-Z])", r"\1_\2", intermediate).lower()
    if insecure[0] != "_":
        return insecure
    return "private" + insecure


def to_list(x):
    """`x` as a list (a list is returned as is, a tuple converted, anything else wrapped)."""
    if isinstance(x, list):
        return x
    if isinstance(x, tuple):
        return list(x)
    return [x]


def has_arg(fn, name, accept_all=False):
    """Whether `fn` accepts a keyword argument `name` (or any, with accept_all and **kwargs)."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    if accept_all and any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return True
    return name in params


def unpack_singleton(x):
    """The only element of a one-element list, else the list."""
    if len(x) == 1:
        return x[0]
    return x
