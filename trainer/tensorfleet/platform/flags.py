"""`tf.flags` / `tf.app.flags`: TF1's absl-style command-line flags, on the standard library only.

Sits beside the graph runtime (it imports nothing from it); `app.run` parses `sys.argv` through `FLAGS`.
What TF 1.15 programs use works as there:

* `DEFINE_string/integer/float/boolean/bool/list/enum(name, default, help)`; a string default is parsed
  like a command-line value (`DEFINE_integer("n", "5", ...)` gives 5); redefining a name raises
  `DuplicateFlagError`.
* `FLAGS(argv, known_only=False)` parses `--name=value`, `--name value`, `-name=value`, `--bool`,
  `--nobool`, `--bool=false`; `--` ends the flags. It returns `[argv[0]] + the arguments it did not
  consume` (positional arguments, and with `known_only=True` the unknown flags, which is what
  `tf.app.run` does). Bad values raise `IllegalFlagValueError`; unknown flags (known_only=False)
  `UnrecognizedFlagError`.
* `FLAGS.name` reads a value. As TF 1.15's flags wrapper, reading a flag before any parse parses
  `sys.argv` tolerating unknown flags. `FLAGS.name = v` sets one; `FLAGS.flag_values_dict()`,
  `FLAGS["name"].value`, `"name" in FLAGS`, `FLAGS.is_parsed()`, `FLAGS.mark_as_parsed()`,
  `FLAGS.unparse_flags()`, and the old `FLAGS.__flags` dict / `FLAGS._parse_flags()` are there too.

Not absl: no flag files (`--flagfile`), no `--helpfull`/key flags, no validators; `--help` prints the
defined flags and exits 0 only when parsing through `tf.app.run`.
"""
from __future__ import annotations

import sys

__all__ = ["FLAGS", "FlagValues", "Error", "IllegalFlagValueError", "UnrecognizedFlagError", "DuplicateFlagError",
           "UnparsedFlagAccessError", "DEFINE_string", "DEFINE_integer", "DEFINE_float", "DEFINE_boolean",
           "DEFINE_bool", "DEFINE_list", "DEFINE_enum"]


class Error(Exception):
    """Base class of the flag errors (absl's `flags.Error`)."""


class IllegalFlagValueError(Error):
    pass


class UnrecognizedFlagError(Error):
    def __init__(self, flagname, flagvalue=""):
        self.flagname, self.flagvalue = flagname, flagvalue
        super().__init__(f"Unknown command line flag '{flagname}'")


class DuplicateFlagError(Error):
    pass


class UnparsedFlagAccessError(Error, AttributeError):
    pass


_TRUE = ("true", "t", "1", "yes", "y")
_FALSE = ("false", "f", "0", "no", "n")


def _parse_bool(text):
    if isinstance(text, bool):
        return text
    if isinstance(text, (int,)) and text in (0, 1):
        return bool(text)
    if isinstance(text, str) and text.lower() in _TRUE:
        return True
    if isinstance(text, str) and text.lower() in _FALSE:
        return False
    raise ValueError("Non-boolean argument to boolean flag")


def _parse_int(text):
    if isinstance(text, bool):
        raise ValueError("Expect argument to be an integer")
    if isinstance(text, int):
        return text
    try:
        s = text.strip()
        return int(s, 16) if s.lower().startswith(("0x", "-0x")) else int(s, 10)
    except (ValueError, AttributeError):
        raise ValueError(f"Expect argument to be a string or int, found {type(text)}"
                         if not isinstance(text, str) else "invalid literal for int()") from None


def _parse_float(text):
    if isinstance(text, bool):
        raise ValueError("Expect argument to be a float")
    try:
        return float(text)
    except (TypeError, ValueError):
        raise ValueError(f"could not convert string to float: {text!r}") from None


def _parse_list(text):
    if isinstance(text, (list, tuple)):
        return [str(v) for v in text]
    text = str(text)
    return [s.strip() for s in text.split(",")] if text else []


class Flag:
    """One defined flag: `name`, `default`, `value`, `help`, `present` (times set on the command line)."""

    def __init__(self, name, default, help_string, parse, kind, serialize=str):
        self.name, self.help, self._parse, self.flag_type, self._serialize = name, help_string, parse, kind, serialize
        self.default = None if default is None else self.parse_value(default, "default")
        self.value = self.default
        self.present = 0
        self.using_default_value = True

    @property
    def boolean(self):
        return self.flag_type == "bool"

    def parse_value(self, text, where="value"):
        try:
            return self._parse(text)
        except ValueError as e:
            shown = text if where == "value" else f"{text!r} (default)"
            raise IllegalFlagValueError(f"flag --{self.name}={shown}: {e}") from None

    def set_from_command_line(self, text):
        self.value = self.parse_value(text)
        self.present += 1
        self.using_default_value = False

    def __repr__(self):
        return f"<Flag --{self.name}={self.value!r}>"


class FlagValues:
    """A registry of flags with attribute access (absl's `FlagValues`); `FLAGS` is the global one."""

    def __init__(self):
        object.__setattr__(self, "_flags", {})
        object.__setattr__(self, "_parsed", False)

    # -- definition -----------------------------------------------------------
    def _define(self, flag: Flag):
        if flag.name in self._flags:
            raise DuplicateFlagError(f"The flag '{flag.name}' is defined twice. Redefining a flag is not allowed.")
        self._flags[flag.name] = flag
        return flag

    # -- attribute access ---------------------------------------------------------
    def __getattr__(self, name):
        if name == "__flags":  # old TF1 code: FLAGS.__flags.items()
            return dict(self._flags)
        flags = self.__dict__["_flags"]
        if name not in flags:
            raise AttributeError(name)
        if not self.__dict__["_parsed"]:  # TF 1.15's wrapper: parse sys.argv on first read
            self(sys.argv, known_only=True)
        return flags[name].value

    def __setattr__(self, name, value):
        if name not in self._flags:
            raise UnrecognizedFlagError(name, value)
        flag = self._flags[name]
        flag.value = flag.parse_value(value) if value is not None else None
        flag.using_default_value = False

    def __getitem__(self, name) -> Flag:
        if name not in self._flags:
            raise UnrecognizedFlagError(name)
        return self._flags[name]

    def __contains__(self, name):
        return name in self._flags

    def __iter__(self):
        return iter(list(self._flags))

    def __len__(self):
        return len(self._flags)

    def __dir__(self):
        return sorted(self._flags)

    def __delattr__(self, name):
        if name not in self._flags:
            raise AttributeError(name)
        del self._flags[name]

    def flag_values_dict(self) -> dict:
        return {name: f.value for name, f in self._flags.items()}

    def get_flag_value(self, name, default):
        return self._flags[name].value if name in self._flags else default

    def is_parsed(self) -> bool:
        return self._parsed

    def mark_as_parsed(self):
        object.__setattr__(self, "_parsed", True)

    def unparse_flags(self):
        for f in self._flags.values():
            f.value, f.present, f.using_default_value = f.default, 0, True
        object.__setattr__(self, "_parsed", False)

    def _parse_flags(self, args=None):
        """TF <= 1.4's private parse, still called by old scripts: returns the unparsed arguments."""
        return self(sys.argv if args is None else [sys.argv[0] if sys.argv else ""] + list(args),
                    known_only=True)[1:]

    # -- parsing --------------------------------------------------------------
    def __call__(self, argv, known_only: bool = False) -> list:
        """Parses argv[1:]; returns [argv[0]] + the arguments not consumed."""
        argv = list(argv)
        if not argv:
            raise Error("argv cannot be an empty list, and must contain the program name as the first element.")
        rest, args, i = [argv[0]], argv[1:], 0
        while i < len(args):
            arg = args[i]
            i += 1
            if arg == "--":
                rest.extend(args[i:])
                break
            if not isinstance(arg, str) or not arg.startswith("-") or arg == "-":
                rest.append(arg)
                continue
            body = arg.lstrip("-")
            name, has_value, value = body.partition("=")
            flag = self._flags.get(name)
            if flag is None and not has_value and name.startswith("no") and \
                    self._flags.get(name[2:]) is not None and self._flags[name[2:]].boolean:
                self._flags[name[2:]].set_from_command_line(False)
                continue
            if flag is None:
                if known_only:
                    rest.append(arg)
                    continue
                raise UnrecognizedFlagError(name, value)
            if has_value:
                flag.set_from_command_line(value)
            elif flag.boolean:
                flag.set_from_command_line(True)
            elif i < len(args):
                flag.set_from_command_line(args[i])
                i += 1
            else:
                raise IllegalFlagValueError(f"Missing value for flag {arg}")
        self.mark_as_parsed()
        return rest

    def help_text(self) -> str:
        lines = []
        for name in sorted(self._flags):
            f = self._flags[name]
            lines.append(f"  --{'[no]' if f.boolean else ''}{name}: {f.help or ''}")
            lines.append(f"    (default: {f.default!r})")
        return "\n".join(lines)


FLAGS = FlagValues()


def _define(flag_values, flag):
    return (flag_values if flag_values is not None else FLAGS)._define(flag)


def DEFINE_string(name, default, help, flag_values=None, **args):  # noqa: A002  (absl's argument name)
    """A string flag."""
    return _define(flag_values, Flag(name, default, help, str, "string"))


def _bounded(parse_value, lower_bound, upper_bound):
    """`parse_value`, then a check that the value lies in [lower_bound, upper_bound] (None: unbounded)."""
    def parse(text):
        v = parse_value(text)
        if lower_bound is not None and v < lower_bound:
            raise ValueError(f"{v} is not >= {lower_bound}")
        if upper_bound is not None and v > upper_bound:
            raise ValueError(f"{v} is not <= {upper_bound}")
        return v
    return parse


def DEFINE_integer(name, default, help, lower_bound=None, upper_bound=None, flag_values=None, **args):  # noqa: A002
    """An integer flag, optionally bounded (inclusive)."""
    return _define(flag_values, Flag(name, default, help, _bounded(_parse_int, lower_bound, upper_bound), "int"))


def DEFINE_float(name, default, help, lower_bound=None, upper_bound=None, flag_values=None, **args):  # noqa: A002
    """A float flag, optionally bounded (inclusive)."""
    return _define(flag_values, Flag(name, default, help, _bounded(_parse_float, lower_bound, upper_bound), "float"))


def DEFINE_boolean(name, default, help, flag_values=None, **args):  # noqa: A002
    """A boolean flag: `--name`, `--noname`, `--name=true|false|1|0`."""
    return _define(flag_values, Flag(name, default, help, _parse_bool, "bool"))


DEFINE_bool = DEFINE_boolean


def DEFINE_list(name, default, help, flag_values=None, **args):  # noqa: A002
    """A comma-separated list of strings (`--names=a,b,c`)."""
    return _define(flag_values, Flag(name, default, help, _parse_list, "list"))


def DEFINE_enum(name, default, enum_values, help, flag_values=None, **args):  # noqa: A002
    """A string flag restricted to `enum_values`."""
    enum_values = list(enum_values)

    def parse(text):
        if text not in enum_values:
            raise ValueError(f"value should be one of <{'|'.join(enum_values)}>")
        return text
    return _define(flag_values, Flag(name, default, help, parse, "enum"))
