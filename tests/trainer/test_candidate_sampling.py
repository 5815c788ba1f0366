"""Candidate samplers against their distributions, nce_loss / sampled_softmax_loss against numpy (TF 1.15's
_compute_sampled_logits written out), gradients by finite differences."""
import numpy as np
import pytest

import tensorfleet as tf
from gradcheck import check_gradients

RNG = np.random.RandomState(0)
W = RNG.randn(10, 4)
B = RNG.randn(10)
X = RNG.randn(3, 4)
LABELS = np.array([[1], [4], [7]], np.int64)
SAMPLED = np.array([0, 4, 9, 2], np.int64)          # 4 is row 1's true class: an accidental hit
TRUE_EXP = np.array([[0.3], [0.2], [0.1]])
SAMPLED_EXP = np.array([0.5, 0.2, 0.05, 0.25])


@pytest.fixture(autouse=True)
def _graph():
    with tf.Graph().as_default():
        yield


def run(t):
    with tf.Session() as s:
        return s.run(t)


def reference_logits(w, b, x, remove_hits):
    true = np.einsum("nd,nd->n", x, w[LABELS[:, 0]])[:, None] + b[LABELS] - np.log(TRUE_EXP)
    sampled = x @ w[SAMPLED].T + b[SAMPLED] - np.log(SAMPLED_EXP)
    if remove_hits:
        sampled = np.where(LABELS == SAMPLED[None, :], -np.inf, sampled)
    return np.concatenate([true, sampled], 1)


def sampled_values():
    return (tf.constant(SAMPLED), tf.constant(TRUE_EXP, tf.float32), tf.constant(SAMPLED_EXP, tf.float32))


def test_nce_loss_matches_numpy_and_gradients():
    logits = reference_logits(W, B, X, remove_hits=False)
    labels = np.concatenate([np.ones((3, 1)), np.zeros((3, 4))], 1)
    ref = np.sum(np.maximum(logits, 0) - logits * labels + np.log1p(np.exp(-np.abs(logits))), axis=1)
    got = run(tf.nn.nce_loss(tf.constant(W), tf.constant(B), LABELS, tf.constant(X), 4, 10,
                             sampled_values=sampled_values()))
    np.testing.assert_allclose(got, ref, rtol=1e-6)

    def loss(w, x):
        return tf.nn.nce_loss(w, tf.constant(B), LABELS, x, 4, 10, sampled_values=sampled_values())
    check_gradients(loss, [W, X], rtol=1e-5, atol=1e-7)


def test_sampled_softmax_masks_accidental_hits():
    logits = reference_logits(W, B, X, remove_hits=True)
    shifted = logits - logits.max(1, keepdims=True)
    ref = -(shifted[:, 0] - np.log(np.exp(shifted).sum(1)))
    got = run(tf.nn.sampled_softmax_loss(tf.constant(W), tf.constant(B), LABELS, tf.constant(X), 4, 10,
                                         sampled_values=sampled_values()))
    np.testing.assert_allclose(got, ref, rtol=1e-6)
    hits = run(tf.nn.compute_accidental_hits(LABELS, SAMPLED, 1))
    assert hits.tolist() == [[False] * 4, [False, True, False, False], [False] * 4]
    check_gradients(lambda w: tf.nn.sampled_softmax_loss(w, tf.constant(B), LABELS, tf.constant(X), 4, 10,
                                                         sampled_values=sampled_values()), [W], rtol=1e-5, atol=1e-7)


def test_log_uniform_sampler_follows_zipf_and_reports_expected_counts():
    n, k = 40000, 8
    s, true_exp, s_exp = run(tf.nn.log_uniform_candidate_sampler(LABELS, 1, n, False, k, seed=3))
    p = (np.log(np.arange(k) + 2) - np.log(np.arange(k) + 1)) / np.log(k + 1)
    freq = np.bincount(s, minlength=k) / n
    assert s.min() >= 0 and s.max() < k
    np.testing.assert_allclose(freq, p, atol=4 * np.sqrt(p * (1 - p) / n).max())
    np.testing.assert_allclose(true_exp[:, 0], p[LABELS[:, 0]] * n, rtol=1e-5)
    np.testing.assert_allclose(s_exp, p[s] * n, rtol=1e-5)


def test_unique_sampling_is_distinct_seeded_and_counts_are_probabilities():
    outs = []
    for _ in range(2):
        with tf.Graph().as_default():
            outs.append(run(tf.nn.log_uniform_candidate_sampler(LABELS, 1, 6, True, 20, seed=5)))
    (s, t_exp, s_exp), (s2, _, _) = outs
    assert len(set(s.tolist())) == 6 and s.tolist() == s2.tolist()
    assert np.all((s_exp > 0) & (s_exp <= 1)) and np.all((t_exp > 0) & (t_exp <= 1))
    u, _, u_exp = run(tf.nn.uniform_candidate_sampler(LABELS, 1, 5, True, 5, seed=1))
    assert sorted(u.tolist()) == [0, 1, 2, 3, 4] and np.allclose(u_exp, u_exp[0])
    with pytest.raises(ValueError, match="cannot exceed"):
        tf.nn.uniform_candidate_sampler(LABELS, 1, 6, True, 5)


def test_word2vec_style_training_lowers_the_loss():
    tf.set_random_seed(0)
    vocab, dim = 30, 8
    centers = np.arange(60) % vocab
    contexts = ((centers + 1) % vocab).reshape(-1, 1)
    emb = tf.Variable(tf.random_uniform([vocab, dim], -1.0, 1.0))
    nce_w = tf.Variable(tf.truncated_normal([vocab, dim], stddev=1.0 / np.sqrt(dim)))
    nce_b = tf.Variable(tf.zeros([vocab]))
    x = tf.nn.embedding_lookup(emb, tf.constant(centers))
    loss = tf.reduce_mean(tf.nn.nce_loss(nce_w, nce_b, tf.constant(contexts), x, num_sampled=5, num_classes=vocab))
    train = tf.train.GradientDescentOptimizer(1.0).minimize(loss)
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        first = np.mean([s.run(loss) for _ in range(5)])
        for _ in range(200):
            s.run(train)
        last = np.mean([s.run(loss) for _ in range(5)])
    assert last < 0.5 * first


@pytest.mark.parametrize("strategy,layout", [("mod", [[0, 3, 6, 9], [1, 4, 7], [2, 5, 8]]),
                                             ("div", [[0, 1, 2, 3], [4, 5, 6], [7, 8, 9]])])
def test_losses_over_sharded_weights_follow_the_partition_strategy(strategy, layout):
    """weights as a list of shards (TF's sharded-embedding form): rows assigned by embedding_lookup's mod/div rule,
    so the losses equal the numpy reference on the full table; the gradient reaches each shard's rows."""
    shards = [tf.constant(W[rows]) for rows in layout]
    logits = reference_logits(W, B, X, remove_hits=True)
    shifted = logits - logits.max(1, keepdims=True)
    ref = -(shifted[:, 0] - np.log(np.exp(shifted).sum(1)))
    loss = tf.nn.sampled_softmax_loss(shards, tf.constant(B), LABELS, tf.constant(X), 4, 10,
                                      sampled_values=sampled_values(), partition_strategy=strategy)
    nce = tf.nn.nce_loss(shards, tf.constant(B), LABELS, tf.constant(X), 4, 10, sampled_values=sampled_values(),
                         partition_strategy=strategy)
    full_nce = tf.nn.nce_loss(tf.constant(W), tf.constant(B), LABELS, tf.constant(X), 4, 10,
                              sampled_values=sampled_values())
    grads = [tf.convert_to_tensor(g) for g in tf.gradients(tf.reduce_sum(loss), shards)]  # IndexedSlices, as TF
    full = tf.constant(W)
    full_grad = tf.convert_to_tensor(tf.gradients(tf.reduce_sum(tf.nn.sampled_softmax_loss(
        full, tf.constant(B), LABELS, tf.constant(X), 4, 10, sampled_values=sampled_values())), [full])[0])
    got, got_nce, want_nce, got_grads, want_grad = run([loss, nce, full_nce, grads, full_grad])
    np.testing.assert_allclose(got, ref, rtol=1e-6)
    np.testing.assert_allclose(got_nce, want_nce, rtol=1e-12)
    for g, rows in zip(got_grads, layout):
        np.testing.assert_allclose(g, want_grad[rows], rtol=1e-12, atol=1e-15)
