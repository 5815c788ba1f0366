"""`tf.app.run` and `tf.flags` / `tf.app.flags` (absl semantics as used by TF 1.15).

Oracle: absl/TF 1.15's documented flag syntax (`--name=value`, `--name value`, `--bool`/`--nobool`, `--`
ends the flags, unknown flags left for `main` by `tf.app.run`, string defaults parsed, `sys.exit(main(argv))`).
"""
import os
import subprocess
import sys
import textwrap

import pytest

import tensorfleet as tf
from tensorfleet import flags as flags_mod


@pytest.fixture
def fv():
    v = flags_mod.FlagValues()
    flags_mod.DEFINE_string("data_dir", "/tmp/data", "Where the data is.", flag_values=v)
    flags_mod.DEFINE_integer("batch_size", 32, "Batch size.", lower_bound=1, flag_values=v)
    flags_mod.DEFINE_float("learning_rate", "0.01", "Learning rate.", flag_values=v)
    flags_mod.DEFINE_boolean("fake_data", False, "Use fake data.", flag_values=v)
    flags_mod.DEFINE_bool("verbose", True, "Chatty.", flag_values=v)
    flags_mod.DEFINE_list("hosts", "a:1,b:2", "Hosts.", flag_values=v)
    flags_mod.DEFINE_enum("mode", "train", ["train", "eval"], "Mode.", flag_values=v)
    return v


@pytest.fixture
def global_flags():
    """Restores the global FLAGS registry (tests define flags on it like a real program)."""
    saved = dict(tf.flags.FLAGS._flags)
    parsed = tf.flags.FLAGS.is_parsed()
    yield tf.flags.FLAGS
    tf.flags.FLAGS._flags.clear()
    tf.flags.FLAGS._flags.update(saved)
    object.__setattr__(tf.flags.FLAGS, "_parsed", parsed)


def test_defaults_types_and_string_defaults_are_parsed(fv):
    fv.mark_as_parsed()
    assert fv.data_dir == "/tmp/data" and fv.batch_size == 32 and fv.learning_rate == 0.01
    assert type(fv.learning_rate) is float and fv.fake_data is False and fv.verbose is True
    assert fv.hosts == ["a:1", "b:2"] and fv.mode == "train"
    assert fv.flag_values_dict()["batch_size"] == 32 and "data_dir" in fv and "nope" not in fv
    assert fv["batch_size"].default == 32 and fv["batch_size"].help == "Batch size."


def test_command_line_forms(fv):
    rest = fv(["prog", "--data_dir=/d", "--batch_size", "64", "-learning_rate=0.5", "--fake_data", "--noverbose",
               "pos1", "--hosts=x,y,z", "--mode", "eval", "--", "--batch_size=1", "tail"])
    assert rest == ["prog", "pos1", "--batch_size=1", "tail"]
    assert (fv.data_dir, fv.batch_size, fv.learning_rate, fv.fake_data, fv.verbose) == ("/d", 64, 0.5, True, False)
    assert fv.hosts == ["x", "y", "z"] and fv.mode == "eval"
    assert fv["batch_size"].present == 1 and not fv["batch_size"].using_default_value
    fv(["prog", "--fake_data=false", "--verbose=1", "--hosts="])
    assert fv.fake_data is False and fv.verbose is True and fv.hosts == []


def test_bool_flag_does_not_take_the_next_argument(fv):
    assert fv(["prog", "--fake_data", "file.txt"]) == ["prog", "file.txt"] and fv.fake_data is True


def test_unknown_flags_errors_and_known_only(fv):
    with pytest.raises(flags_mod.UnrecognizedFlagError, match="Unknown command line flag 'bogus'"):
        fv(["prog", "--bogus=1"])
    assert fv(["prog", "--bogus=1", "--batch_size=2", "--other"], known_only=True) == ["prog", "--bogus=1", "--other"]
    assert fv.batch_size == 2
    with pytest.raises(flags_mod.IllegalFlagValueError, match="flag --batch_size=abc"):
        fv(["prog", "--batch_size=abc"])
    with pytest.raises(flags_mod.IllegalFlagValueError, match="0 is not >= 1"):
        fv(["prog", "--batch_size=0"])
    with pytest.raises(flags_mod.IllegalFlagValueError, match="one of <train|eval>"):
        fv(["prog", "--mode=test"])
    with pytest.raises(flags_mod.IllegalFlagValueError, match="Missing value"):
        fv(["prog", "--data_dir"])
    with pytest.raises(flags_mod.IllegalFlagValueError):
        fv(["prog", "--fake_data=maybe"])
    assert issubclass(flags_mod.IllegalFlagValueError, flags_mod.Error)


def test_duplicate_definition_attribute_set_and_unknown_attribute(fv):
    with pytest.raises(flags_mod.DuplicateFlagError, match="'batch_size' is defined twice"):
        flags_mod.DEFINE_integer("batch_size", 1, "again", flag_values=fv)
    fv.mark_as_parsed()
    fv.batch_size = 7
    assert fv.batch_size == 7
    with pytest.raises(AttributeError):
        _ = fv.not_defined
    with pytest.raises(flags_mod.UnrecognizedFlagError):
        fv.not_defined = 1
    assert set(fv.__flags) == set(fv.flag_values_dict())  # old TF1 idiom FLAGS.__flags
    fv.unparse_flags()
    assert not fv.is_parsed() and fv["batch_size"].value == 32


def test_first_read_parses_sys_argv_like_tf1(fv, monkeypatch):
    monkeypatch.setattr(sys, "argv", ["prog", "--batch_size=5", "--unknown", "x"])
    assert not fv.is_parsed()
    assert fv.batch_size == 5 and fv.is_parsed()


def test_app_run_parses_calls_main_with_the_rest_and_exits_with_its_value(global_flags):
    tf.app.flags.DEFINE_integer("tfl_test_steps", 10, "Steps.")
    tf.flags.DEFINE_string("tfl_test_name", "x", "Name.")
    assert tf.app.flags is tf.flags and tf.flags.FLAGS is global_flags
    seen = {}

    def main(argv):
        seen["argv"] = argv
        seen["steps"] = tf.flags.FLAGS.tfl_test_steps
        seen["name"] = tf.app.flags.FLAGS.tfl_test_name
        return 3

    with pytest.raises(SystemExit) as e:
        tf.app.run(main=main, argv=["prog", "--tfl_test_steps", "20", "--unknown=1", "file", "--tfl_test_name=y"])
    assert e.value.code == 3
    assert seen == {"argv": ["prog", "--unknown=1", "file"], "steps": 20, "name": "y"}
    with pytest.raises(SystemExit) as e:
        tf.app.run(main=lambda argv: None, argv=["prog"])
    assert e.value.code is None


def test_app_run_bad_flag_value_exits_1_and_help_exits_0(global_flags, capsys):
    tf.flags.DEFINE_integer("tfl_test_n", 1, "An int.")
    with pytest.raises(SystemExit) as e:
        tf.app.run(main=lambda argv: 0, argv=["prog", "--tfl_test_n=abc"])
    assert e.value.code == 1
    assert "FATAL Flags parsing error: flag --tfl_test_n=abc" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        tf.app.run(main=lambda argv: 0, argv=["prog", "--help"])
    assert e.value.code == 0 and "--tfl_test_n: An int." in capsys.readouterr().out


def test_a_tf1_script_with_flags_runs_as_a_program(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent('''
        import sys
        import numpy as np
        import tensorfleet as tf

        flags = tf.app.flags
        FLAGS = flags.FLAGS
        flags.DEFINE_float("learning_rate", 0.1, "Initial learning rate.")
        flags.DEFINE_integer("max_steps", 5, "Number of steps to run trainer.")
        flags.DEFINE_boolean("fake_data", False, "If true, uses fake data.")

        def main(argv):
            x = tf.Variable(3.0)
            step = tf.train.GradientDescentOptimizer(FLAGS.learning_rate).minimize(tf.square(x))
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                for _ in range(FLAGS.max_steps):
                    sess.run(step)
                print("x=%.6f fake=%s rest=%s" % (sess.run(x), FLAGS.fake_data, argv[1:]))
            return 0

        if __name__ == "__main__":
            tf.app.run()
    '''))
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    out = subprocess.run([sys.executable, str(script), "--learning_rate=0.25", "--max_steps", "2", "--fake_data",
                          "--extra", "pos"], capture_output=True, text=True, env=env, timeout=60)
    assert out.returncode == 0, out.stderr
    # x <- x - lr * 2x = x * (1 - 2 lr): 3 * 0.5**2
    assert out.stdout.strip() == "x=0.750000 fake=True rest=['--extra', 'pos']"
