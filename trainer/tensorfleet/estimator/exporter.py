"""`tf.estimator.Exporter` and TF 1.15's SavedModel exporters for `EvalSpec(exporters=...)`.

`train_and_evaluate` calls each exporter after every evaluation (training.py), with
`export_path = <model_dir>/export/<exporter name>`, the evaluated checkpoint and its metrics, and
`is_the_final_export` on the evaluation of the last checkpoint. `LatestExporter` exports every time and
keeps the newest `exports_to_keep` timestamped exports; `BestExporter` exports when `compare_fn(best, current)`
says the metrics improved (by default a smaller `loss`), reading the best so far from the evaluation event
files (`eval/*.tfevents.*`) when it first sees the model_dir, and keeps `exports_to_keep`; `FinalExporter`
exports once, at the end. Each export is `Estimator.export_saved_model` (saved_model_export.py).
"""
from __future__ import annotations

import glob
import os
import shutil

from .. import errors
from .. import tf_logging as logging
from ..summary.summary_iterator import summary_iterator
from . import inputs

__all__ = ["Exporter", "LatestExporter", "BestExporter", "FinalExporter"]


class Exporter:
    """`tf.estimator.Exporter`: `name` and `export(estimator, export_path, checkpoint_path, eval_result,
    is_the_final_export)`."""

    @property
    def name(self):
        raise NotImplementedError

    def export(self, estimator, export_path, checkpoint_path, eval_result, is_the_final_export):
        raise NotImplementedError


class _SavedModelExporter(Exporter):
    def __init__(self, name, serving_input_receiver_fn, assets_extra=None, as_text=False):
        self._name = name
        self._serving_input_receiver_fn = serving_input_receiver_fn
        self._assets_extra, self._as_text = assets_extra, as_text

    @property
    def name(self):
        return self._name

    def export(self, estimator, export_path, checkpoint_path, eval_result, is_the_final_export):
        return estimator.export_saved_model(export_path, self._serving_input_receiver_fn,
                                            assets_extra=self._assets_extra, as_text=self._as_text,
                                            checkpoint_path=checkpoint_path)


def _check_exports_to_keep(exports_to_keep, what: str) -> None:
    if exports_to_keep is not None and exports_to_keep <= 0:
        raise ValueError(f"`exports_to_keep`, if provided, must be {what}. Got {exports_to_keep}")


def _garbage_collect_exports(export_dir_base: str, exports_to_keep) -> None:
    """Deletes all but the newest `exports_to_keep` exports (directories named by a 10-digit timestamp)."""
    if exports_to_keep is None or not os.path.isdir(export_dir_base):
        return
    versions = sorted(int(n) for n in os.listdir(export_dir_base) if len(n) == 10 and n.isdigit())
    for version in versions[:-exports_to_keep]:
        path = os.path.join(export_dir_base, str(version))
        try:
            shutil.rmtree(path)
        except OSError as e:
            logging.warning("Can not delete %s recursively: %s", path, e)


class LatestExporter(Exporter):
    """`tf.estimator.LatestExporter(name, serving_input_receiver_fn, assets_extra=None, as_text=False,
    exports_to_keep=5)`."""

    def __init__(self, name, serving_input_receiver_fn, assets_extra=None, as_text=False, exports_to_keep=5):
        self._saved_model_exporter = _SavedModelExporter(name, serving_input_receiver_fn, assets_extra, as_text)
        _check_exports_to_keep(exports_to_keep, "positive number")
        self._exports_to_keep = exports_to_keep

    @property
    def name(self):
        return self._saved_model_exporter.name

    def export(self, estimator, export_path, checkpoint_path, eval_result, is_the_final_export):
        result = self._saved_model_exporter.export(estimator, export_path, checkpoint_path, eval_result,
                                                   is_the_final_export)
        _garbage_collect_exports(export_path, self._exports_to_keep)
        return result


class FinalExporter(Exporter):
    """`tf.estimator.FinalExporter(name, serving_input_receiver_fn, assets_extra=None, as_text=False)`."""

    def __init__(self, name, serving_input_receiver_fn, assets_extra=None, as_text=False):
        self._saved_model_exporter = _SavedModelExporter(name, serving_input_receiver_fn, assets_extra, as_text)

    @property
    def name(self):
        return self._saved_model_exporter.name

    def export(self, estimator, export_path, checkpoint_path, eval_result, is_the_final_export):
        if not is_the_final_export:
            return None
        logging.info("Performing the final export in the end of training.")
        return self._saved_model_exporter.export(estimator, export_path, checkpoint_path, eval_result,
                                                 is_the_final_export)


def _loss_smaller(best_eval_result, current_eval_result):
    """TF's default `compare_fn`: the current `loss` is smaller than the best."""
    key = "loss"
    if not best_eval_result or key not in best_eval_result:
        raise ValueError("best_eval_result cannot be empty or no loss is found in it.")
    if not current_eval_result or key not in current_eval_result:
        raise ValueError("current_eval_result cannot be empty or no loss is found in it.")
    return best_eval_result[key] > current_eval_result[key]


def _verify_compare_fn_args(compare_fn) -> None:
    args = set(inputs.fn_args(compare_fn))
    for needed in ("best_eval_result", "current_eval_result"):
        if needed not in args:
            raise ValueError(f"compare_fn ({compare_fn}) must include {needed} argument.")
    extra = sorted(args - {"best_eval_result", "current_eval_result"})
    if extra:
        raise ValueError(f"compare_fn ({compare_fn}) has following not expected args: {extra}")


class BestExporter(Exporter):
    """`tf.estimator.BestExporter(name='best_exporter', serving_input_receiver_fn=None,
    event_file_pattern='eval/*.tfevents.*', compare_fn=<smaller loss>, assets_extra=None, as_text=False,
    exports_to_keep=5)`."""

    def __init__(self, name="best_exporter", serving_input_receiver_fn=None, event_file_pattern="eval/*.tfevents.*",
                 compare_fn=_loss_smaller, assets_extra=None, as_text=False, exports_to_keep=5):
        if compare_fn is None:
            raise ValueError("`compare_fn` must not be None.")
        _verify_compare_fn_args(compare_fn)
        self._compare_fn = compare_fn
        self._saved_model_exporter = _SavedModelExporter(name, serving_input_receiver_fn, assets_extra, as_text)
        self._event_file_pattern = event_file_pattern
        self._model_dir = None
        self._best_eval_result = None
        self._has_exported = False
        _check_exports_to_keep(exports_to_keep, "a positive number")
        self._exports_to_keep = exports_to_keep

    @property
    def name(self):
        return self._saved_model_exporter.name

    def export(self, estimator, export_path, checkpoint_path, eval_result, is_the_final_export):
        if self._model_dir != estimator.model_dir and self._event_file_pattern:
            logging.info("Loading best metric from event files.")
            self._model_dir = estimator.model_dir
            self._best_eval_result = self._get_best_eval_result(os.path.join(self._model_dir,
                                                                             self._event_file_pattern))
        if self._best_eval_result is None or not self._has_exported or \
                self._compare_fn(best_eval_result=self._best_eval_result, current_eval_result=eval_result):
            logging.info("Performing best model export.")
            self._best_eval_result = eval_result
            result = self._saved_model_exporter.export(estimator, export_path, checkpoint_path, eval_result,
                                                       is_the_final_export)
            _garbage_collect_exports(export_path, self._exports_to_keep)
            self._has_exported = True
            return result
        return None

    def _get_best_eval_result(self, pattern):
        """The best metrics any evaluation event in the files matching `pattern` holds (scalar summaries)."""
        best = None
        for path in sorted(glob.glob(pattern)):
            try:
                for event in summary_iterator(path):
                    current = {v.tag: v.simple_value for v in event.summary.value if v.HasField("simple_value")} \
                        if event.HasField("summary") else {}
                    if current and (best is None or self._compare_fn(best, current)):
                        best = current
            except (errors.OpError, OSError) as e:
                logging.warning("Could not read event file %s: %s", path, e)
        return best
