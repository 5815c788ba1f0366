"""`tf.contrib.layers.embed_sequence`: ids [batch, length] -> embeddings [batch, length, embed_dim] from the
model variable `EmbedSequence/embeddings` [vocab_size, embed_dim] (TF 1.15's contrib/layers encoders.py).

The embeddings' initializer defaults to the variable scope's (glorot-uniform when none is set), and
`reuse=True` finds an existing table (vocab_size and embed_dim may then be omitted). `unique=True` looks
each distinct id up once and gathers the rows back (TF's embedding_lookup_unique): same values.
"""
from __future__ import annotations

from ...default_graph import convert_to_tensor
from ...ops import array_ops, nn_impl
from ...ops import variable_scope as _vs
from ...ops.set_ops import unique as _unique
from ..framework.variables import model_variable

__all__ = ["embed_sequence"]


def embed_sequence(ids, vocab_size=None, embed_dim=None, unique=False, initializer=None, regularizer=None,
                   trainable=True, scope=None, reuse=None):
    """Maps a sequence of symbol ids to a sequence of embeddings (the table shared when reused)."""
    if not (reuse or (vocab_size and embed_dim)):
        raise ValueError(f"Must specify vocab size and embedding dimension when not reusing. Got "
                         f"vocab_size={vocab_size} and embed_dim={embed_dim}")
    with _vs.variable_scope(scope, "EmbedSequence", [ids], reuse=reuse):
        shape = None if (reuse and vocab_size is None) or embed_dim is None else [vocab_size, embed_dim]
        embeddings = model_variable("embeddings", shape=shape, initializer=initializer, regularizer=regularizer,
                                    trainable=trainable)
        if unique:
            return _embedding_lookup_unique(embeddings, ids)
        return nn_impl.embedding_lookup(embeddings, ids)


def _embedding_lookup_unique(params, ids):
    ids = convert_to_tensor(ids)
    shape = array_ops.shape(ids)
    flat = array_ops.reshape(ids, [-1])
    unique_ids, idx = _unique(flat)
    rows = nn_impl.embedding_lookup(params, unique_ids)
    embeds = array_ops.reshape(array_ops.gather(rows, idx), array_ops.concat([shape, array_ops.shape(rows)[1:]], 0))
    embeds.set_shape(ids.shape.concatenate(rows.shape[1:]))
    return embeds


