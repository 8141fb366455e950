"""Where the local tools find the intake's metrics lines: standard output, while in-process."""

from __future__ import annotations

import sys
import threading

from local.testkit.intake_lines import PrintedLines, decided_times


def test_printed_lines_keep_the_metrics_lines_of_every_thread_and_pass_the_rest_through(capsys):
    with PrintedLines() as printed:
        threads = [threading.Thread(target=print, args=(f'{{"_aws": {{}}, "n": {n}}}',)) for n in range(20)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        print("a line for a person")
        sys.stdout.write('{"_aws": {}, "n": "split ')
        sys.stdout.write('across writes"}\n')

    assert sorted(printed.lines) == sorted([f'{{"_aws": {{}}, "n": {n}}}' for n in range(20)]
                                           + ['{"_aws": {}, "n": "split across writes"}'])  # fmt: skip
    assert capsys.readouterr().out == "a line for a person\n"
    assert sys.stdout is not printed


def _line(request: str, decided: int) -> str:
    return f'{{"_aws": {{}}, "correlation_id": "{request}", "decidedAt": {decided}}}'


def test_decision_times_are_read_again_until_every_request_is_found():
    """A log group is written a moment after the answer: the last lines come on a later read."""
    reads = iter([[_line("a", 1)], [_line("a", 1), "START RequestId: x"], [_line("a", 1), _line("b", 2)]])
    assert decided_times(lambda: next(reads), {"a", "b"}, wait_s=5) == {"a": 1, "b": 2}


def test_a_request_never_logged_is_left_out_once_the_wait_is_over():
    assert decided_times(lambda: [_line("a", 1), _line("other", 3)], {"a", "b"}, wait_s=0.6) == {"a": 1}
