"""partition(): staged per-task sub-partitions for a placed step. Checked against hand-derived layouts:
a parameter-server step is one pull and one push per ps task, a tensor crosses to a task once per step,
values kept for a later stage stay on their task, and no partition waits on a value produced later."""
import numpy as np

import tensorfleet as tf
from tensorfleet.device_spec import DeviceSpec
from tensorfleet.devices import Device
from tensorfleet.distributed.partition import partition, prune
from tensorfleet.placement import Placer

TASKS = ["/job:ps/replica:0/task:0", "/job:ps/replica:0/task:1", "/job:worker/replica:0/task:0"]


def _place(graph, fetches, feeds, targets):
    devices = [Device(t + "/device:CPU:0", DeviceSpec.from_string(t + "/device:CPU:0"), 1 << 28, np) for t in TASKS]
    placer = Placer(graph, devices, job="worker", task=0)
    return placer.place(prune(fetches, feeds, targets))


def _ps_model(ps_tasks):
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    with tf.device(tf.train.replica_device_setter(ps_tasks=ps_tasks, worker_device="/job:worker/task:0")):
        gs = tf.Variable(0, name="global_step", trainable=False)
        ws = [tf.Variable(tf.ones([4, 4]), name=f"w{i}") for i in range(4)]
        h = x
        for w in ws:
            h = tf.nn.relu(tf.matmul(h, w))
        loss = tf.reduce_mean(h)
        train = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=gs)
    return x, loss, train


def test_a_ps_step_is_one_pull_and_one_push_per_ps_task():
    x, loss, train = _ps_model(ps_tasks=1)
    g = tf.get_default_graph()
    plan = partition([loss], [x], [train], _place(g, [loss], [x], [train]))
    per_task = {}
    for stage in plan.stages:
        for sub in stage:
            per_task.setdefault(sub.task, []).append(sub)
    assert len(per_task[TASKS[0]]) == 2  # pull (variable reads) then push (gradients in, updates applied)
    pull, push = per_task[TASKS[0]]
    assert {n.split(":")[0] for n in pull.fetch} == {"w0", "w1", "w2", "w3"}
    assert {t for t in push.targets} >= {"GradientDescent"} or any("GradientDescent" in t for t in push.targets)
    assert len(per_task[TASKS[2]]) == 1
    assert [s.task for s in plan.stages[0]] == [TASKS[0]]
    feeds_of_push = {src for _, src in push.sent}
    # the gradients and the learning rate (a worker-side constant, as in TF) arrive in that one push
    assert all(src.startswith("gradients/") or src == "GradientDescent/learning_rate:0" for src in feeds_of_push)
    assert len(feeds_of_push) == 5


def test_two_ps_tasks_each_pull_and_push_once_and_concurrently():
    x, loss, train = _ps_model(ps_tasks=2)
    g = tf.get_default_graph()
    plan = partition([loss], [x], [train], _place(g, [loss], [x], [train]))
    first = plan.stages[0]
    assert sorted(s.task for s in first) == TASKS[:2]  # both pulls in one stage: they run concurrently
    counts = {}
    for stage in plan.stages:
        for sub in stage:
            counts[sub.task] = counts.get(sub.task, 0) + 1
    # ps1: pull + push. ps0 also increments the global step, which TF orders after the updates of
    # *both* ps tasks (a control edge through the worker's `update` group): one more call there.
    assert counts == {TASKS[0]: 3, TASKS[1]: 2, TASKS[2]: 2}


def test_a_tensor_crosses_to_a_task_once_per_step():
    with tf.device("/job:ps/task:0"):
        a = tf.constant(np.ones(3, np.float32)) * 2.0
    with tf.device("/job:worker/task:0"):
        outs = [a + 1.0, a * 3.0, tf.reduce_sum(a)]
        total = tf.add_n([tf.reduce_sum(outs[0]), tf.reduce_sum(outs[1]), outs[2]])
    g = tf.get_default_graph()
    plan = partition([total], [], [], _place(g, [total], [], []))
    worker_sub = [s for st in plan.stages for s in st if s.task == TASKS[2]][0]
    assert [src for _, src in worker_sub.sent] == [a.name]
    ps_sub = [s for st in plan.stages for s in st if s.task == TASKS[0]][0]
    assert ps_sub.fetch == [a.name]


def test_values_for_a_later_stage_of_the_same_task_stay_on_that_task():
    with tf.device("/job:ps/task:0"):
        a = tf.constant(2.0, name="a") * 3.0
    with tf.device("/job:worker/task:0"):
        b = a + 1.0
    with tf.device("/job:ps/task:0"):
        c = tf.add(a, b, name="c")  # needs a (ps, stage 0) and b (worker, stage 1): stage 2 on ps
    g = tf.get_default_graph()
    plan = partition([c], [], [], _place(g, [c], [], []))
    assert [[s.task for s in st] for st in plan.stages] == [[TASKS[0]], [TASKS[2]], [TASKS[0]]]
    first, _, last = (st[0] for st in plan.stages)
    assert a.name in first.keep and a.name in first.keep_returned  # kept for stage 2 and sent to the worker
    assert [src for _, src in last.local] == [a.name]
    assert [src for _, src in last.sent] == [b.name]
    assert last.end_of_step


def test_partition_graphs_replace_cross_task_inputs_by_placeholders_and_keep_variables_local():
    x, loss, train = _ps_model(ps_tasks=1)
    g = tf.get_default_graph()
    plan = partition([loss], [x], [train], _place(g, [loss], [x], [train]))
    worker = [s for st in plan.stages for s in st if s.task == TASKS[2]][0]
    ops = {n.name: n.op for n in worker.graph_def.node}
    assert "w0" not in ops and ops["_recv/w0/0"] == "Placeholder"
    push = plan.stages[-1][0]
    push_ops = {n.name: n.op for n in push.graph_def.node}
    assert push_ops["w0"] == "VariableV2"  # the variable itself (a reference), not a value
    assert all(n.device in ("/device:CPU:0", "") for n in push.graph_def.node)


def test_a_stage_waits_only_for_what_it_needs():
    with tf.device("/job:ps/task:0"):
        a = tf.constant(1.0, name="a") * 2.0
    with tf.device("/job:ps/task:1"):
        slow = tf.constant(3.0, name="slow") * 4.0
    with tf.device("/job:worker/task:0"):
        b = a + 1.0  # depends on ps0 only
    with tf.device("/job:ps/task:1"):
        c = tf.add(slow, b, name="c")
    g = tf.get_default_graph()
    plan = partition([c], [], [], _place(g, [c], [], []))
    worker = [s for s in plan.subs if s.task == TASKS[2]][0]
    assert [d.task for d in worker.deps] == [TASKS[0]]  # not ps1's stage 0
    ps1 = [s for s in plan.subs if s.task == TASKS[1]]
    assert len(ps1) == 1 and [d.task for d in ps1[0].deps] == [TASKS[2]]  # `slow` moved next to its consumer


def _sub_of(plan, op_name):
    return next(s for s in plan.subs if any(op.name == op_name for op in s.ops))


def test_adam_on_two_ps_updates_each_ps_as_soon_as_its_gradients_arrive():
    """TF's executor runs each ps's ApplyAdam when its gradient arrives, and only `_finish` (the beta-power
    updates, colocated with the first variable by name) waits for every ps's updates. Moving the ApplyAdams
    of beta1_power's task later, into `_finish`'s stage, made them wait for the other ps's updates: a
    staler gradient for every variable there (dist-mnist, 2 ps + 4 workers, trained worse than on TF)."""
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    with tf.device(tf.train.replica_device_setter(ps_tasks=2, worker_device="/job:worker/task:0")):
        gs = tf.Variable(0, name="global_step", trainable=False)  # ps0
        hid_w = tf.Variable(tf.ones([4, 4]), name="hid_w")  # ps1
        hid_b = tf.Variable(tf.zeros([4]), name="hid_b")  # ps0, first by name: the beta powers' task
        sm_w = tf.Variable(tf.ones([4, 2]), name="sm_w")  # ps1
        sm_b = tf.Variable(tf.zeros([2]), name="sm_b")  # ps0
        loss = tf.reduce_sum(tf.matmul(tf.nn.relu(tf.matmul(x, hid_w) + hid_b), sm_w) + sm_b)
        train = tf.train.AdamOptimizer(0.01).minimize(loss, global_step=gs)
    g = tf.get_default_graph()
    plan = partition([], [x], [train], _place(g, [], [x], [train]))
    applies = {v: _sub_of(plan, f"Adam/update_{v}/ApplyAdam") for v in ("hid_w", "hid_b", "sm_w", "sm_b")}
    assert {v: s.task for v, s in applies.items()} == {"hid_w": TASKS[1], "hid_b": TASKS[0], "sm_w": TASKS[1],
                                                       "sm_b": TASKS[0]}
    gradients = _sub_of(plan, "gradients/MatMul_grad/MatMul_1")
    assert gradients.task == TASKS[2]
    assert {s.stage for s in applies.values()} == {gradients.stage + 1}  # both ps, right after the gradients
    # the beta powers are read in ps0's pull, with the variables: ps1's push waits for no other ps0 call
    pull0 = next(s for s in plan.stages[0] if s.task == TASKS[0])
    assert {"beta1_power:0", "beta2_power:0", "hid_b:0", "sm_b:0"} <= set(pull0.fetch)
    assert {d.task for d in applies["hid_w"].deps} == {TASKS[0], TASKS[1], TASKS[2]}
    assert all(d.stage < applies["hid_w"].stage for d in applies["hid_w"].deps)
    # `_finish`: the beta powers are multiplied after the updates of both ps tasks, on ps0
    finish = _sub_of(plan, "Adam/Assign")
    assert finish.task == TASKS[0] and finish is _sub_of(plan, "Adam/Assign_1")
    assert finish.stage == applies["hid_w"].stage + 1 and applies["hid_w"] in finish.deps
    assert [s.stage for s in plan.subs if s.task == TASKS[1]] == [0, gradients.stage + 1]  # ps1: pull, push


def test_a_variable_update_is_not_moved_later_to_join_its_task_s_later_stage():
    with tf.device("/job:ps/task:0"):
        v = tf.Variable(0.0, name="v")
        bump = tf.assign_add(v, 1.0, name="bump")  # stage 0 on ps0
    with tf.device("/job:ps/task:1"):
        other = tf.multiply(tf.constant(3.0), 2.0, name="other")  # stage 0 on ps1
    with tf.device("/job:ps/task:0"):
        with tf.control_dependencies([bump]):
            after = tf.add(other, 1.0, name="after")  # stage 1 on ps0 (waits for ps1)
    g = tf.get_default_graph()
    plan = partition([after], [], [], _place(g, [after], [], []))
    assert (_sub_of(plan, "bump").task, _sub_of(plan, "bump").stage) == (TASKS[0], 0)
    assert _sub_of(plan, "after").stage == 1


def test_adam_s_update_group_and_global_step_join_the_beta_powers_call_on_their_ps():
    """Adam's `update` group (a NoOp on the worker) waits for every ps's ApplyAdam and for the beta powers'
    updates on ps0, which wait for those too: it runs on ps0, and the `global_step` increment after it
    in the same call. A step is pull, pass, push, one call on ps0: no call on ps0 after it."""
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    with tf.device(tf.train.replica_device_setter(ps_tasks=2, worker_device="/job:worker/task:0")):
        gs = tf.Variable(0, name="global_step", trainable=False)   # ps0
        hid_w = tf.Variable(tf.ones([4, 4]), name="hid_w")          # ps1
        hid_b = tf.Variable(tf.zeros([4]), name="hid_b")            # ps0
        loss = tf.reduce_sum(tf.nn.relu(tf.matmul(x, hid_w) + hid_b))
        train = tf.train.AdamOptimizer(0.01).minimize(loss, global_step=gs)
    g = tf.get_default_graph()
    plan = partition([gs.value()], [x], [train], _place(g, [gs.value()], [x], [train]))
    finish = _sub_of(plan, "Adam/Assign")
    assert _sub_of(plan, "Adam/update") is finish and _sub_of(plan, train.name) is finish
    assert finish.task == TASKS[0] and finish.stage == len(plan.stages) - 1
    assert [len(stage) for stage in plan.stages] == [2, 1, 2, 1]   # both pulls, the pass, both pushes, ps0
    # the order the NoOp stands for still holds: the increment runs after both ps tasks' updates
    assert _sub_of(plan, "Adam/update_hid_w/ApplyAdam") in finish.deps


def test_a_group_of_updates_on_two_unordered_ps_tasks_stays_on_the_worker():
    """GradientDescent's `update` group waits for updates on ps0 and ps1 that do not wait for each other: no
    single ps sees both, so the NoOp stays where it is placed and the `global_step` increment after it."""
    x, loss, train = _ps_model(ps_tasks=2)
    g = tf.get_default_graph()
    plan = partition([loss], [x], [train], _place(g, [loss], [x], [train]))
    group = _sub_of(plan, "GradientDescent/update")
    assert group.task == TASKS[2]
    assert {d.task for d in group.deps} >= set(TASKS[:2])
    increment = _sub_of(plan, train.name)
    assert increment.task == TASKS[0] and group in increment.deps


def test_a_sub_partition_knows_how_many_bytes_its_run_returns_when_the_shapes_say():
    """The master sends a stage's small calls together and moves large ones in threads of their own: a pull
    of fully shaped float32 variables is counted exactly; a value of unknown size is -1 (treated as large)."""
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    with tf.device(TASKS[0]):
        w = tf.Variable(tf.ones([4, 3]), name="w")          # 48 bytes
        b = tf.Variable(tf.zeros([3], tf.float64), name="b")  # 24 bytes
    with tf.device(TASKS[1]):
        ragged = tf.identity(tf.reshape(x, [-1]), name="ragged")   # unknown length, read by the worker
    with tf.device(TASKS[2]):
        y = tf.reduce_sum(tf.matmul(x, w) + tf.cast(b, tf.float32)) + tf.reduce_sum(ragged)
    g = tf.get_default_graph()
    plan = partition([y], [x], [], _place(g, [y], [x], []))
    pull = next(s for s in plan.subs if s.task == TASKS[0])
    assert pull.reply_bytes == 48 + 24
    assert next(s for s in plan.subs if s.task == TASKS[1]).reply_bytes == -1
