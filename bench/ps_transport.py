"""Parameter-server transport: push/pull through the worker service vs a raw loopback TCP copy, same run.

    OPENBLAS_NUM_THREADS=1 python bench/ps_transport.py [--rounds 5] [--sizes 4,64]

Two processes on 127.0.0.1: a ps task (a tensorfleet server) and this process, a
worker task whose in-process master runs the steps:
- push: a float32 tensor fed on the worker crosses to the ps, where `tf.shape` reads it
  (nothing else is computed, so the figure is the transport's);
- pull: a ps variable of that size crosses to the worker, where a 1-element slice reads it.
Baseline, measured in the same run, interleaved round by round: a raw TCP socket between
two processes moving the same bytes with an 8-byte acknowledgement (push: send + ack;
pull: request + receive into a preallocated buffer). It prints MB/s (10^6 bytes) per
direction and size, the ratio to raw TCP (target >= 0.6x), the gRPC-only path
(TENSORFLEET_BULK=0) for reference, and the latency of trivial remote Session.runs:
(a) this process's master running one op on the ps (one RunGraph round trip), and
(b) a client process whose Session targets the ps's master (one RunStep round trip).

Comparisons in one run, interleaved round by round (each side a fresh ps process):
- `--baseline-trainer DIR`: the ps runs another checkout's trainer/ directory (e.g. the main branch
  before a change) against this one; TCP bulk and the Unix socket, MB/s and latency, ratio this/baseline.
- `--tls`: a job CA and certificate made with the openssl command; plain one-port TCP bulk against TLS
  on one port (ALPN) and TLS in two-port mode (TENSORFLEET_SINGLE_PORT=0), ratios to plain. The baseline
  of each TLS side is a bare TLS socket pair (Python's ssl at both ends), so the ratio of the bare pairs
  says how much of plaintext's speed any transport on Python's ssl can keep on the machine.
"""
from __future__ import annotations

import os
import sys

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import socket  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MB = 1e6

PS_MAIN = """
import json, sys, threading
import tensorfleet as tf
server = tf.train.Server(tf.train.ClusterSpec(json.loads(sys.argv[1])), job_name="ps", task_index=0)
threading.Thread(target=lambda: (sys.stdin.read(), server.stop()), daemon=True).start()
print("READY", flush=True)
server.join()
"""

SINK_MAIN = """
import socket, sys
import numpy as np
srv = socket.socket(); srv.bind(("127.0.0.1", 0)); srv.listen(1)
print(srv.getsockname()[1], flush=True)
conn, _ = srv.accept(); conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
if len(sys.argv) > 1:   # cert, key, CA: the same bytes over a bare TLS socket (Python's ssl, mutual)
    import ssl
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER); ctx.load_cert_chain(sys.argv[1], sys.argv[2])
    ctx.load_verify_locations(sys.argv[3]); ctx.verify_mode = ssl.CERT_REQUIRED
    conn = ctx.wrap_socket(conn, server_side=True)
bufs = {}
def recv_exact(view):
    while len(view):
        n = conn.recv_into(view)
        if not n: raise SystemExit(0)
        view = view[n:]
while True:
    head = bytearray(9)
    try: recv_exact(memoryview(head))
    except SystemExit: break
    kind, size = head[0], int.from_bytes(head[1:], "little")
    buf = bufs.setdefault(size, np.empty(size, np.uint8))
    if kind == 1:   # push: receive size bytes, ack
        recv_exact(memoryview(buf)); conn.sendall(b"ok......")
    else:           # pull: send size bytes
        conn.sendall(memoryview(buf))
"""

CLIENT_MAIN = """
import json, sys, time
import tensorfleet as tf
target, n = sys.argv[1], int(sys.argv[2])
with tf.device("/job:ps/task:0"):
    c = tf.constant(2.0) + tf.constant(3.0)
with tf.Session(target) as sess:
    for _ in range(50): sess.run(c)
    times = []
    for _ in range(5):
        t = time.perf_counter()
        for _ in range(n): sess.run(c)
        times.append((time.perf_counter() - t) / n)
print(json.dumps(sorted(times)[len(times) // 2]))
"""


def _free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def _env(extra=None, trainer=None):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([trainer or os.path.join(ROOT, "trainer"), env.get("PYTHONPATH", "")])
    env.update(extra or {})
    return env


class RawTcp:
    """The baseline: a sink process on loopback; push = send + 8-byte ack, pull = 9-byte request + receive.
    `tls` (cert, key, CA files): the same over a bare TLS socket pair (Python's ssl both ends, mutual)."""

    def __init__(self, tls=None):
        self.proc = subprocess.Popen([sys.executable, "-c", SINK_MAIN, *(tls or ())], stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, text=True)
        port = int(self.proc.stdout.readline())
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if tls:
            import ssl
            ctx = ssl.create_default_context(cafile=tls[2])
            ctx.load_cert_chain(tls[0], tls[1])
            self.sock = ctx.wrap_socket(self.sock, server_hostname="127.0.0.1")
        self.bufs: dict = {}

    def _recv_exact(self, view):
        while len(view):
            n = self.sock.recv_into(view)
            if not n:
                raise ConnectionError("sink closed")
            view = view[n:]

    def push(self, data: np.ndarray) -> None:
        self.sock.sendall(b"\x01" + data.nbytes.to_bytes(8, "little"))
        self.sock.sendall(memoryview(data).cast("B"))
        self._recv_exact(memoryview(bytearray(8)))

    def pull(self, nbytes: int) -> None:
        buf = self.bufs.setdefault(nbytes, np.empty(nbytes, np.uint8))
        self.sock.sendall(b"\x02" + nbytes.to_bytes(8, "little"))
        self._recv_exact(memoryview(buf))

    def close(self):
        self.sock.close()
        self.proc.wait(10)


def _rate(fn, nbytes, min_seconds=0.4, min_reps=3, cpu=None):
    """MB/s of `fn` moving `nbytes` a call; with `cpu` (a list): appends the ps's CPU ms per MB moved."""
    fn()  # warm
    reps, start, cpu0 = 0, time.perf_counter(), _ps_cpu()
    while reps < min_reps or time.perf_counter() - start < min_seconds:
        fn()
        reps += 1
    if cpu is not None:
        cpu.append((_ps_cpu() - cpu0) * 1e3 / (reps * nbytes / MB))
    return reps * nbytes / (time.perf_counter() - start) / MB


_PS_PID = [0]


def _ps_cpu() -> float:
    """CPU seconds (user + system) the ps process has used: less sensitive to other jobs' load than rates."""
    if not _PS_PID[0] or not os.path.exists(f"/proc/{_PS_PID[0]}/stat"):
        return 0.0
    with open(f"/proc/{_PS_PID[0]}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _measure_round(out, sess, size_ops, data, raw, size) -> None:
    """One round for one size: tensorfleet and raw TCP alternate, push then pull."""
    x, pushed, _, pulled = size_ops
    key = f"{size >> 20}MiB"
    cpu = out.setdefault("ps_cpu_ms_per_MB", {})
    out["tensorfleet"].setdefault(f"push {key}", []).append(
        _rate(lambda: sess.run(pushed, {x: data}), size, cpu=cpu.setdefault(f"push {key}", [])))
    out["raw_tcp"].setdefault(f"push {key}", []).append(_rate(lambda: raw.push(data), size))
    out["tensorfleet"].setdefault(f"pull {key}", []).append(
        _rate(lambda: sess.run(pulled), size, cpu=cpu.setdefault(f"pull {key}", [])))
    out["raw_tcp"].setdefault(f"pull {key}", []).append(_rate(lambda: raw.pull(size), size))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--sizes", default="4,64", help="MiB")
    parser.add_argument("--latency-calls", type=int, default=500)
    parser.add_argument("--grpc", action="store_true", help="also measure the gRPC-only path (slower; with "
                                                            "--baseline-trainer: as a third pair of sides)")
    parser.add_argument("--baseline-trainer", default="", help="A/B: the ps from this trainer/ directory too")
    parser.add_argument("--tls", action="store_true", help="A/B: TLS bulk (one port, two ports) against plain")
    args = parser.parse_args(argv)
    sizes = [int(s) << 20 for s in args.sizes.split(",")]
    if args.baseline_trainer or args.tls:
        return compare(args, sizes)
    os.environ["TENSORFLEET_LOCAL_SOCKET"] = "0"
    tcp = bench(sizes, args.rounds, args.latency_calls, bulk=True)
    os.environ.pop("TENSORFLEET_LOCAL_SOCKET")
    results = bench(sizes, args.rounds, args.latency_calls, bulk=True)
    results["tcp_bulk"] = tcp
    if args.grpc:
        results["grpc_only"] = bench(sizes, max(1, args.rounds // 2), 50, bulk=False)["tensorfleet"]
    report(results, sizes)


def compare(args, sizes):
    """Sides measured alternately, `--rounds` rounds, the order rotating; medians and ratios per round."""
    sides = {}
    if args.baseline_trainer:
        base = os.path.abspath(args.baseline_trainer)
        paths = [("TCP bulk", {"TENSORFLEET_LOCAL_SOCKET": "0"}, True), ("Unix socket", {}, True)]
        if args.grpc:
            paths.append(("gRPC-only", {}, False))
        for path, extra, bulk in paths:
            sides[f"baseline, {path}"] = (extra, base, bulk)
            sides[f"this tree, {path}"] = (extra, None, bulk)
    if args.tls:
        tls = _tls_files(tempfile.mkdtemp(prefix="tf-bench-tls-"))
        plain = {"TENSORFLEET_LOCAL_SOCKET": "0"}
        sides["plain, one port"] = (plain, None, True)
        sides["TLS, one port"] = (dict(plain, **tls), None, True)
        sides["TLS, two ports"] = (dict(plain, TENSORFLEET_SINGLE_PORT="0", **tls), None, True)
    runs: dict = {name: [] for name in sides}
    names = list(sides)
    for r in range(args.rounds):
        for name in names[r % len(names):] + names[:r % len(names)]:
            extra, trainer, bulk = sides[name]
            saved = {k: os.environ.get(k) for k in extra}
            os.environ.update(extra)
            try:
                runs[name].append(bench(sizes, 1, args.latency_calls, bulk=bulk, trainer=trainer))
            finally:
                for k, v in saved.items():
                    if v is None:
                        os.environ.pop(k, None)
                    else:
                        os.environ[k] = v
        print(f"round {r + 1}/{args.rounds} done, load {os.getloadavg()[0]:.2f}", flush=True)
    report_comparison(runs, sides)


def _tls_files(d):
    """A job CA and one certificate it signs (SAN 127.0.0.1), made with the openssl command."""
    def openssl(*a):
        subprocess.run(["openssl", *a], cwd=d, check=True, capture_output=True, timeout=60)

    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "1",
            "-subj", "/CN=bench-ca")
    with open(os.path.join(d, "ext.cnf"), "w") as f:
        f.write("subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\n")
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "t.key", "-out", "t.csr", "-subj", "/CN=task")
    openssl("x509", "-req", "-in", "t.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out", "t.pem",
            "-days", "1", "-extfile", "ext.cnf")
    return {"TENSORFLEET_TLS_CERT": os.path.join(d, "t.pem"), "TENSORFLEET_TLS_KEY": os.path.join(d, "t.key"),
            "TENSORFLEET_TLS_CA": os.path.join(d, "ca.pem")}


def report_comparison(runs, sides):
    print(f"machine: {platform.machine()} {os.cpu_count()} cpus, {platform.python_implementation()} "
          f"{platform.python_version()}, load {os.getloadavg()[0]:.2f}")
    names = list(runs)
    keys = [k for k in runs[names[0]][0]["tensorfleet"]]
    lat = ["latency_in_process_master_us", "latency_remote_master_us"]
    print(f"{'side':<24}" + "".join(f"{k:>15}" for k in keys) + f"{'lat in-proc us':>16}{'lat remote us':>15}")
    med = {}
    for name in names:
        med[name] = {k: statistics.median(r["tensorfleet"][k][0] for r in runs[name]) for k in keys}
        med[name].update({k: statistics.median(r[k] for r in runs[name]) for k in lat})
        print(f"{name:<24}" + "".join(f"{med[name][k]:>15.0f}" for k in keys)
              + "".join(f"{med[name][k]:>16.0f}" for k in lat[:1]) + f"{med[name][lat[1]]:>15.0f}")
    print("the ps's CPU (user + system, /proc) per MB moved (ms) and per trivial call (us), medians:")
    for name in names:
        cpu = {k: statistics.median(r["ps_cpu_ms_per_MB"][k][0] for r in runs[name]) for k in keys}
        med[name].update({f"cpu {k}": v for k, v in cpu.items()})
        med[name]["cpu call"] = statistics.median(r["ps_cpu_us_per_call"] for r in runs[name])
        print(f"{name:<24}" + "".join(f"{cpu[k]:>15.3f}" for k in keys) + f"{med[name]['cpu call']:>16.0f}")
    print("bare socket pairs, the same bytes in the same rounds (MB/s; under TLS: Python's ssl at both ends):")
    for name in names:
        raw = {k: statistics.median(r["raw_tcp"][k][0] for r in runs[name]) for k in keys}
        med[name].update({f"raw {k}": v for k, v in raw.items()})
        print(f"{name:<24}" + "".join(f"{raw[k]:>15.0f}" for k in keys))
    if "TLS, one port" in names:
        print("ratio of the bare pairs, TLS / plain (what Python's ssl leaves on this machine): " + ", ".join(
            f"{k} {med['TLS, one port']['raw ' + k] / med['plain, one port']['raw ' + k]:.2f}x" for k in keys))
    pairs = [(n, n.replace("this tree", "baseline")) for n in names if n.startswith("this tree")]
    pairs += [(n, "plain, one port") for n in names if n.startswith("TLS")]
    if "TLS, one port" in names:
        pairs.append(("TLS, one port", "TLS, two ports"))
    for a, b in pairs:
        per_round = {k: [x["tensorfleet"][k][0] / y["tensorfleet"][k][0] for x, y in zip(runs[a], runs[b])]
                     for k in keys}
        print(f"ratio {a} / {b}: " + ", ".join(
            f"{k} {med[a][k] / med[b][k]:.2f}x [{min(per_round[k]):.2f}-{max(per_round[k]):.2f}]" for k in keys)
            + "; latency " + ", ".join(f"{med[a][k] / med[b][k]:.2f}x" for k in lat) + " (below 1: faster)"
            + "; ps CPU " + ", ".join(f"{k} {med[a]['cpu ' + k] / med[b]['cpu ' + k]:.2f}x" for k in keys)
            + f", per call {med[a]['cpu call'] / med[b]['cpu call']:.2f}x (below 1: less)")


def bench(sizes, rounds, latency_calls, bulk=True, trainer=None):
    if not bulk:
        os.environ["TENSORFLEET_BULK"] = "0"
    sys.path.insert(0, os.path.join(ROOT, "trainer"))
    import tensorfleet as tf

    cluster = {"ps": [f"127.0.0.1:{_free_port()}"], "worker": [f"127.0.0.1:{_free_port()}"]}
    ps = subprocess.Popen([sys.executable, "-c", PS_MAIN, json.dumps(cluster)], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, text=True,
                          env=_env({"TENSORFLEET_BULK": "1" if bulk else "0"}, trainer))
    assert ps.stdout.readline().startswith("READY")
    _PS_PID[0] = ps.pid
    server = tf.train.Server(cluster, job_name="worker", task_index=0)
    tls = [os.environ.get(k, "") for k in ("TENSORFLEET_TLS_CERT", "TENSORFLEET_TLS_KEY", "TENSORFLEET_TLS_CA")]
    raw = RawTcp(tls if all(tls) else None)   # under TLS, the baseline is a bare TLS socket pair
    out = {"tensorfleet": {}, "raw_tcp": {}}
    try:
        graph = tf.Graph()
        with graph.as_default():
            ops = {}
            for size in sizes:
                n = size // 4
                x = tf.placeholder(tf.float32, [None], name=f"x{n}")
                with tf.device("/job:ps/task:0"):
                    pushed = tf.shape(x)
                    v = tf.Variable(tf.zeros([n]), name=f"v{n}")
                with tf.device("/job:worker/task:0"):
                    pulled = v[0]
                ops[size] = (x, pushed, v, pulled)
            with tf.device("/job:ps/task:0"):
                trivial = tf.constant(2.0) + tf.constant(3.0)
            init = tf.global_variables_initializer()
        sess = tf.Session(server.target, graph=graph)
        sess.run(init)
        data = {size: np.random.RandomState(0).rand(size // 4).astype(np.float32) for size in sizes}
        for _ in range(rounds):
            for size in sizes:
                _measure_round(out, sess, ops[size], data[size], raw, size)
        for _ in range(50):
            sess.run(trivial)
        lat = []
        cpu0 = _ps_cpu()
        for _ in range(5):
            t = time.perf_counter()
            for _ in range(latency_calls):
                sess.run(trivial)
            lat.append((time.perf_counter() - t) / latency_calls * 1e6)
        out["latency_in_process_master_us"] = statistics.median(lat)
        out["ps_cpu_us_per_call"] = (_ps_cpu() - cpu0) * 1e6 / (5 * latency_calls)
        client = subprocess.run([sys.executable, "-c", CLIENT_MAIN, "grpc://" + cluster["ps"][0],
                                 str(latency_calls)], capture_output=True, text=True, env=_env(), timeout=300)
        if client.returncode != 0:
            print(client.stderr[-2000:], file=sys.stderr)
        out["latency_remote_master_us"] = json.loads(client.stdout.strip().splitlines()[-1]) * 1e6 \
            if client.returncode == 0 else float("nan")
        sess.close()
    finally:
        raw.close()
        server.stop()
        ps.stdin.close()
        ps.wait(10)
        os.environ.pop("TENSORFLEET_BULK", None)
    return out


def report(results, sizes):
    print(f"machine: {platform.machine()} {os.cpu_count()} cpus, {platform.python_implementation()} "
          f"{platform.python_version()}, load {os.getloadavg()[0]:.2f}; OPENBLAS_NUM_THREADS="
          f"{os.environ.get('OPENBLAS_NUM_THREADS')}, OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '')}")
    print("default path: the same-host Unix socket; 'TCP bulk': the bulk path over loopback TCP "
          "(TENSORFLEET_LOCAL_SOCKET=0), each against raw TCP measured in its own rounds")
    print(f"{'transfer':<14}{'default MB/s':>14}{'raw TCP':>9}{'ratio':>8}{'TCP bulk MB/s':>15}{'raw TCP':>9}"
          f"{'ratio':>8}" + (f"{'gRPC-only MB/s':>16}" if "grpc_only" in results else ""))
    tcp = results["tcp_bulk"]

    def cols(res, key):
        ratios = [a / b for a, b in zip(res["tensorfleet"][key], res["raw_tcp"][key], strict=True)]
        return (statistics.median(res["tensorfleet"][key]), statistics.median(res["raw_tcp"][key]),
                statistics.median(ratios))

    for key in results["tensorfleet"]:
        a, b, r = cols(results, key)
        c, d, q = cols(tcp, key)
        line = f"{key:<14}{a:>14.0f}{b:>9.0f}{r:>7.2f}x{c:>15.0f}{d:>9.0f}{q:>7.2f}x"
        if "grpc_only" in results:
            line += f"{statistics.median(results['grpc_only'][key]):>16.0f}"
        print(line)
    for name, res in (("default", results), ("TCP bulk", tcp)):
        print(f"trivial Session.run ({name}): in-process master, op on the ps "
              f"{res['latency_in_process_master_us']:.0f} us; client process -> ps's master "
              f"{res['latency_remote_master_us']:.0f} us")


if __name__ == "__main__":
    main()
