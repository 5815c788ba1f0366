"""`tf.app`: TF1's program entry point, `tf.app.run(main=None, argv=None)`, and `tf.app.flags`.

Sits beside the runtime (only `flags` is used). As TF 1.15 (absl's `app.run` with TF's
`_parse_flags_tolerate_undef`): parses `argv` (default `sys.argv`) with `flags.FLAGS(argv, known_only=True)`,
so unknown flags and positional arguments are passed on; calls `main(remaining_argv)` (default: the `main`
function of the `__main__` module) and exits with `sys.exit(main's return value)`. A bad flag value prints
`FATAL Flags parsing error: ...` to stderr and exits 1; `--help`/`-h` (when no flag of that name is defined)
prints the defined flags and exits 0.
"""
from __future__ import annotations

import sys

from . import flags

__all__ = ["run", "flags"]


def _usage(main) -> str:
    doc = (getattr(sys.modules.get("__main__"), "__doc__", None) or "").strip()
    head = doc or f"USAGE: {sys.argv[0] if sys.argv else 'program'} [flags]"
    return f"{head}\n\nflags:\n{flags.FLAGS.help_text()}\n"


def run(main=None, argv=None):
    """Runs `main(argv_rest)` after parsing the flags, then `sys.exit` with its return value."""
    if main is None:
        main = getattr(sys.modules.get("__main__"), "main", None)
        if main is None:
            raise AttributeError("module '__main__' has no attribute 'main'")
    args = list(sys.argv if argv is None else argv)
    for help_flag in ("--help", "-help", "-h", "--helpshort"):
        if help_flag in args[1:args.index("--") if "--" in args else None] and help_flag.lstrip("-") not in flags.FLAGS:
            sys.stdout.write(_usage(main))
            sys.exit(0)
    try:
        rest = flags.FLAGS(args, known_only=True)
    except flags.Error as e:
        sys.stderr.write(f"FATAL Flags parsing error: {e}\nPass --help to see the defined flags.\n")
        sys.exit(1)
    sys.exit(main(rest))
