"""What `tensorfleet run` reads back from the replicas: the summary's final loss and test accuracy (the chief's,
never the 0 a ps serves), and the job name every replica's metrics carry (from HOSTNAME, as in a pod)."""
import json

from local_helpers import script, tfjob
from test_local_run import run_job

# A replica serving the trainer's real metrics (tensorfleet.metrics.TrainerMetrics, what tensorfleet-train
# serves) with the labels the trainer derives from its environment, until it has been scraped twice.
REPLICA = """
import http.server, json, os, sys, threading, time
from prometheus_client import generate_latest
from tensorfleet import metrics
labels = metrics.replica_labels()
print('LABELS ' + json.dumps(labels), flush=True)
m = metrics.TrainerMetrics(labels['job_name'], labels['replica_type'], labels['replica_index'])
index = int(labels['replica_index'])          # worker 1 reports other numbers than worker 0
loss = float(sys.argv[1]) + index
accuracy = sys.argv[2] if sys.argv[2] == '-' else f'{float(sys.argv[2]) - index / 2:g}'
if loss >= 0:                       # a ps computes no loss: it serves the untouched series
    for step in range(1, 4):
        m.record_step(0.01, examples=10, loss=loss + (3 - step), global_step=step)
scrapes = []

class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = generate_latest(m.registry)
        self.send_response(200)
        self.send_header('Content-Type', 'text/plain; version=0.0.4')
        self.end_headers()
        self.wfile.write(body)
        scrapes.append(1)

    def log_message(self, *args):
        pass

server = http.server.ThreadingHTTPServer(('127.0.0.1', int(os.environ['TENSORFLEET_METRICS_PORT'])), Handler)
threading.Thread(target=server.serve_forever, daemon=True).start()
deadline = time.monotonic() + 60
while len(scrapes) < 2 and time.monotonic() < deadline:
    time.sleep(0.05)
if accuracy != '-':
    print(f'test accuracy: {accuracy}', flush=True)
if labels['replica_type'] == 'ps':
    time.sleep(600)                 # a ps serves until the job ends
"""


def test_summary_shows_the_chiefs_final_loss_and_accuracy_and_replicas_carry_the_job_name(tmp_path):
    trainer = script(tmp_path, 'replica.py', REPLICA)
    body = tfjob('summary', {'PS': {'argv': ['python', trainer, '-1', '-']},
                             'Worker': {'n': 2, 'argv': ['python', trainer, '0.25', '0.875']}},
                 success_policy='AllWorkers')
    proc, status, _ = run_job(tmp_path, body)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert status['reason'] == 'Succeeded'
    labels = {line.split(']')[0][1:]: json.loads(line.split('LABELS ', 1)[1])
              for line in proc.stdout.splitlines() if '] LABELS ' in line}
    assert labels == {f'{t}-{i}': {'job_name': 'summary', 'replica_type': t, 'replica_index': str(i)}
                      for t, i in (('ps', 0), ('worker', 0), ('worker', 1))}
    summary = proc.stdout[proc.stdout.index('TFJob summary: Succeeded'):].splitlines()
    assert '  final loss: 0.25 (worker-0)' in summary, summary       # not the ps's 0
    assert '  test accuracy: 0.875 (worker-0)' in summary, summary


def test_summary_has_no_loss_when_no_replica_trained(tmp_path):
    trainer = script(tmp_path, 'replica.py', REPLICA)
    body = tfjob('idle', {'Worker': {'argv': ['python', trainer, '-1', '-']}})
    proc, status, _ = run_job(tmp_path, body)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert 'final loss' not in proc.stdout and 'test accuracy' not in proc.stdout


def test_a_hostname_the_manifest_sets_is_kept(tmp_path):
    echo = script(tmp_path, 'echo.py', "import os; print('HOST ' + os.environ['HOSTNAME'], flush=True)")
    body = tfjob('host', {'Worker': {'n': 2, 'argv': ['python', echo]},
                          'PS': {'argv': ['python', echo], 'env': {'HOSTNAME': 'mine'}}},
                 success_policy='AllWorkers')
    proc, _, _ = run_job(tmp_path, body)
    hosts = sorted(line.split('] ', 1)[0][1:] + ' ' + line.rsplit(' ', 1)[1]
                   for line in proc.stdout.splitlines() if '] HOST ' in line)
    assert hosts == ['ps-0 mine', 'worker-0 host-worker-0', 'worker-1 host-worker-1'], proc.stdout
