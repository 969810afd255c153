"""The compiler's processes (toolchain.py)."""
import os
import shutil
import threading

import pytest

from didax._src.compiler.native import toolchain


@pytest.mark.skipif(shutil.which("true") is None, reason="needs the `true` command")
def test_compilers_start_while_another_thread_changes_the_environment(tmp_path):
    # Background builds start compilers while the program runs on: a variable it sets or
    # removes meanwhile once made a start fail with "Bad address" (the function then stayed
    # on the NumPy tier, with a warning).
    true = shutil.which("true")
    errors, done = [], threading.Event()

    def start_many():
        try:
            for _ in range(40):
                try:
                    code, _ = toolchain.run_compiler([true], str(tmp_path))
                    assert code == 0
                except OSError as e:
                    errors.append(e)
        finally:
            done.set()

    names = [f"DIDAX_TEST_CHURN_{k}" for k in range(50)]
    thread = threading.Thread(target=start_many)
    thread.start()
    try:
        i = 0
        while not done.is_set():
            os.environ[names[i % 50]] = "x" * (i % 200)
            if i % 3 == 0:
                os.environ.pop(names[(i + 7) % 50], None)
            i += 1
    finally:
        thread.join()
        for name in names:
            os.environ.pop(name, None)
    assert not errors, errors[:3]


def test_a_child_gets_a_copy_of_the_environment(monkeypatch):
    monkeypatch.setenv("DIDAX_TEST_CHILD_VARIABLE", "1")
    env = toolchain.child_environment()
    assert env is not os.environ and env["DIDAX_TEST_CHILD_VARIABLE"] == "1"
