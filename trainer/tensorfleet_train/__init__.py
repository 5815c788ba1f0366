"""tensorfleet-train: the launcher that runs inside every ps, worker, chief and evaluator process.

It sits on top of `tensorfleet` (which never imports it) and beside the operator (with which it
shares only the contract in docs/operator.md and docs/launcher.md: TF_CONFIG, CUDA_VISIBLE_DEVICES,
TENSORFLEET_RPC_TOKEN, TENSORFLEET_METRICS_PORT and the exit-code classes). Entry points:
`tensorfleet-train` (cli.main) and `python -m tensorfleet_train`. Modules, in the order of the flow:
cli -> task -> runlog/shutdown -> startup -> script_runner | ps | training | evaluator (models,
checkpoints, telemetry) -> exit_codes.
"""
