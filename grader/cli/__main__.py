"""``python -m grader.cli``: the ``seqgrade`` program."""

from .main import run

if __name__ == "__main__":
    run()
