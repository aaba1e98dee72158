"""The command line explains itself: --version, help for every argument, and usage errors that name the
option as typed and come before anything slow (torch, the checks) is imported."""

import argparse
import json
import subprocess
import sys

import pytest

from grader.cli import build_parser, main
from grader.errors import InvalidNotebook
from grader.notebook import read_notebook
from grader.version import __version__


def test_version(capsys):
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"seqgrade {__version__}"


def test_every_argument_of_every_command_is_described():
    parser = build_parser()
    undescribed = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                undescribed += [
                    f"{name} {a.dest}" for a in sub._actions if not a.help and not isinstance(a, argparse._HelpAction)
                ]
    assert undescribed == []


def _run_cli(args: list[str]) -> tuple[int, str, bool]:
    """Exit code, stderr, and whether torch had been imported when the command returned."""
    code = (
        "import sys; from grader.cli import main; rc = main(sys.argv[1:]); "
        "print('TORCH' if 'torch' in sys.modules else 'NO-TORCH'); sys.exit(rc)"
    )
    proc = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120)
    return proc.returncode, proc.stderr, "NO-TORCH" not in proc.stdout


@pytest.mark.parametrize(
    "args, expected",
    [
        (["grade", "x.ipynb", "--timeout", "-1"], "--timeout must be positive; got -1"),
        (["grade", "x.ipynb", "--call-cpu", "0"], "--call-cpu must be positive; got 0"),
        (["grade", "x.ipynb", "--memory-mb", "0"], "--memory-mb must be positive; got 0"),
        (["grade", "x.ipynb", "--assignment", "nope"], "unknown assignment 'nope'"),
        (["grade", "no-such-file.ipynb"], "no such file: no-such-file.ipynb"),
        (["batch", ".", "--assignment", "nope", "--out", "out"], "unknown assignment 'nope'"),
        (
            ["batch", ".", "--assignment", "sequence_models", "--out", "out", "--call-timeout", "-2"],
            "--call-timeout must be positive",
        ),
        (
            [
                "batch",
                ".",
                "--assignment",
                "sequence_models",
                "--out",
                "out",
                "--db",
                "postgresql://ta:s3cret@db.example/grades",
            ],
            "--db: leave the password out of the gradebook URL",
        ),
    ],
    ids=[
        "timeout",
        "call-cpu",
        "memory",
        "assignment",
        "missing",
        "batch-assignment",
        "batch-call-timeout",
        "batch-db-password",
    ],
)
def test_usage_errors_name_the_option_and_come_before_torch(args, expected, tmp_path):
    rc, err, imported_torch = _run_cli(args)
    assert rc == 2
    assert err.count("\n") == 1 and expected in err, err
    assert "s3cret" not in err
    assert not imported_torch


def test_grade_given_a_folder_points_to_batch(tmp_path):
    rc, err, imported_torch = _run_cli(["grade", str(tmp_path)])
    assert rc == 2 and "is a folder" in err and f"seqgrade batch {tmp_path}" in err
    assert not imported_torch


def test_invalid_json_message_reads_cleanly(tmp_path):
    path = tmp_path / "broken.ipynb"
    path.write_text('{"cells": [{"source": "unterminated')
    with pytest.raises(InvalidNotebook) as info:
        read_notebook(path)
    message = str(info.value)
    assert "at at" not in message and "starting at;" not in message
    assert "Unterminated string starting" in message and "line 1, column" in message
    json.dumps(message)  # a plain string for the result file


def test_terminal_tables_keep_brackets_and_cut_at_words():
    from rich.console import Console

    from grader.report.terminal import clip, print_summary
    from grader.results import CheckResult, ExerciseResult, NotebookResult

    words = "Row i of X must be seq[i : i + s] and y[i] must be seq[i + s]; " * 10
    assert clip(words, 60).endswith("…") and len(clip(words, 60)) <= 60
    assert clip(words, 60)[:-1] == words[: len(clip(words, 60)) - 1]  # cut where a word ends
    assert words[len(clip(words, 60)) - 1] == " "
    check = CheckResult("check_seq2col_windows", "failed", 0, 1.5, message=words)
    result = NotebookResult(
        "sequence_models",
        "[bold]nb.ipynb",
        "graded",
        (ExerciseResult("seq2col", (check,), 1.5, root_cause=words),),
        max_score=1.5,
    )
    console = Console(record=True, width=300)
    print_summary(result, console)
    shown = console.export_text()
    assert "seq[i : i + s]" in shown and "[bold]nb.ipynb" in shown
