"""A string tensor's lengths are checked with Python ints: u64 lengths whose sum wraps around (2**63 + 2**63 + 8
is 8 modulo 2**64) are INVALID_ARGUMENT, not accepted as three strings."""
import numpy as np
import pytest

from tensorfleet import errors
from tensorfleet.distributed import rpc_errors, wire
from tensorfleet.distributed.protos import service_pb2 as pb
from tensorfleet.protos import types_pb2


def _strings_meta(count, nbytes):
    meta = pb.TensorMeta(name="s", dtype=types_pb2.DT_STRING, offset=0, nbytes=nbytes)
    meta.shape.dim.add(size=count)
    return meta


@pytest.mark.parametrize("lengths", [[2**63, 2**63, 8], [2**64 - 1, 9, 0], [2**63, 2**63 + 8, 0]])
def test_string_lengths_that_wrap_around_are_invalid_argument(lengths):
    data = np.array(lengths, "<u8").tobytes() + b"A" * 8
    payload = np.frombuffer(data + bytes(64 - len(data) % 64), np.uint8)
    with pytest.raises(errors.InvalidArgumentError, match="string lengths") as e:
        wire.unpack([_strings_meta(3, len(data))], payload)
    assert rpc_errors.status_of(e.value).code == errors.INVALID_ARGUMENT


def test_string_lengths_that_add_up_still_unpack():
    metas, parts, _ = wire.pack([("s", np.array([b"ab", b"", b"cde"], dtype=object))])
    (_, back), = wire.unpack(metas, b"".join(bytes(p) for p in parts))
    assert back.tolist() == [b"ab", b"", b"cde"]
