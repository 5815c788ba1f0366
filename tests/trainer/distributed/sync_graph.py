"""The small SyncReplicasOptimizer model of the sync-replicas tests, built alike by the test process and by the
client processes they start (every worker's graph shares the ps's variables, accumulators and token queue by
name). loss = sum(v * x) + w * c, so the gradients are x and c."""
import tensorfleet as tf

LR = 0.5


def sync_graph(spec, i, workers, aggregate) -> dict:
    """Worker `i`'s graph and its handles (the chief, i == 0, also has its queue runner and initial tokens);
    every worker has its `make_session_run_hook` hook, begun."""
    g = tf.Graph()
    with g.as_default(), tf.device(tf.train.replica_device_setter(worker_device=f"/job:worker/task:{i}",
                                                                  cluster=spec)):
        gs = tf.train.get_or_create_global_step()
        v = tf.Variable([1.0, -2.0, 3.0], name="v")
        w = tf.Variable(0.5, name="w")
        x, c = tf.placeholder(tf.float32, [3]), tf.placeholder(tf.float32, [])
        loss = tf.reduce_sum(v * x) + w * c
        opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(LR), replicas_to_aggregate=aggregate,
                                             total_num_replicas=workers)
        train = opt.minimize(loss, global_step=gs)
        m = dict(graph=g, gs=gs, v=v, w=w, x=x, c=c, opt=opt, train=train, init=tf.global_variables_initializer(),
                 stale=opt.stale_gradients(), tokens_left=opt._sync_token_queue.size())
        if i == 0:
            m.update(qr=opt.get_chief_queue_runner(), tokens=opt.get_init_tokens_op())
        m.update(hook=opt.make_session_run_hook(is_chief=i == 0))
        m["hook"].begin()
    return m
