"""Generates the `*_pb2.py` + `*_pb2.pyi` (and, for files with services, `*_pb2_grpc.py`) modules.

Build step beside the sources: every `.proto` under `trainer/tensorfleet/**/protos/`
is compiled with grpcio-tools' bundled protoc, with `trainer/` as the import root,
so `tensorfleet/protos/tensor.proto` becomes the module `tensorfleet.protos.tensor_pb2`.
The generated files are committed; `tests/trainer/distributed/test_protos_current.py`
regenerates them into a temporary directory and checks they are identical.

Usage: python scripts/gen_protos.py [--out DIR]   (default: write next to the sources)
"""
from __future__ import annotations

import argparse
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
PROTO_ROOT = ROOT / "trainer"
_SERVICE = re.compile(r"^\s*service\s+\w+", re.MULTILINE)


def proto_files(proto_root: pathlib.Path = PROTO_ROOT) -> list[pathlib.Path]:
    """Every .proto in a `protos` directory under tensorfleet/, sorted (a stable build order)."""
    return sorted(p for p in (proto_root / "tensorfleet").rglob("*.proto") if "protos" in p.parent.parts)


def generate(out_dir: pathlib.Path, proto_root: pathlib.Path = PROTO_ROOT) -> list[pathlib.Path]:
    """Compiles every proto into `out_dir` (mirroring the package layout); returns the files written."""
    from grpc_tools import protoc  # dev dependency (grpcio-tools)

    files = proto_files(proto_root)
    plain = [f for f in files if not _SERVICE.search(f.read_text())]
    services = [f for f in files if f not in plain]
    include = str(pathlib.Path(protoc.__file__).parent / "_proto")  # protoc's well-known types
    out_dir.mkdir(parents=True, exist_ok=True)
    for group, plugins in ((plain, ["--python_out", "--pyi_out"]),
                           (services, ["--python_out", "--pyi_out", "--grpc_python_out"])):
        if not group:
            continue
        args = ["protoc", f"-I{proto_root}", f"-I{include}"]
        args += [f"{p}={out_dir}" for p in plugins]
        args += [str(f.relative_to(proto_root)) for f in group]
        rc = protoc.main(args)
        if rc != 0:
            raise RuntimeError(f"protoc failed ({rc}) on {', '.join(str(f) for f in group)}")
    return sorted((out_dir / "tensorfleet").rglob("*_pb2*.py*"))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=pathlib.Path, default=PROTO_ROOT, help="output root (default: trainer/)")
    args = parser.parse_args(argv)
    for path in generate(args.out):
        print(path.relative_to(args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
