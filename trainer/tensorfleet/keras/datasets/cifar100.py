"""`tf.keras.datasets.cifar100.load_data(label_mode='fine')`: as cifar10 with 100 fine (or 20 coarse) labels,
from the binary version's `train.bin` and `test.bin` (each record: coarse label, fine label, image) in
`$TENSORFLEET_DATA_DIR/cifar100/` or `~/.keras/datasets/cifar-100-binary/`; never downloaded.
"""
from __future__ import annotations

from .cifar import read_records, to_data_format
from .files import find_files

ORIGIN = "https://www.cs.toronto.edu/~kriz/cifar-100-binary.tar.gz, extracted"


def load_data(label_mode="fine"):
    if label_mode not in ("fine", "coarse"):
        raise ValueError("`label_mode` must be one of `fine`, `coarse`.")
    files = find_files("cifar100", ["train.bin", "test.bin"], "cifar-100-binary", ORIGIN)
    column = 1 if label_mode == "fine" else 0
    out = []
    for name in ("train.bin", "test.bin"):
        images, labels = read_records(files[name], 2)
        out.append((to_data_format(images), labels[:, column:column + 1].copy()))
    return tuple(out)
