"""Where the local tools find the intake's metrics lines: standard output, while in-process."""

from __future__ import annotations

import json
import sys
import threading
import time

from local.testkit.intake_lines import LOOK_BACK_MS, PrintedLines, sale_lines, span_since


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


def _line(request: str, arrived: int) -> str:
    fields = {"couponId": 3, "outcome": "SOLD_OUT", "requestId": request, "arrivedAt": arrived, "decidedAt": arrived}
    return json.dumps({"_aws": {}, **fields})


def test_a_sales_lines_are_read_again_until_every_answer_is_there():
    """A log group is written a moment after the answer: the last lines come on a later read."""
    reads = iter([[_line("a", 1)], [_line("a", 1), "START RequestId: x"], [_line("a", 1), _line("b", 2)]])
    assert [line.request_id for line in sale_lines(lambda: next(reads), 3, 2, wait_s=5)] == ["a", "b"]


def test_what_is_there_once_the_wait_is_over():
    assert [line.request_id for line in sale_lines(lambda: [_line("a", 1)], 3, 2, wait_s=0.6)] == ["a"]


def test_a_span_reaches_from_a_minute_before_the_sale_to_a_minute_from_now():
    before = time.time_ns() // 1_000_000
    start, end = span_since(5 * LOOK_BACK_MS)
    after = time.time_ns() // 1_000_000
    assert start == 4 * LOOK_BACK_MS
    assert before + LOOK_BACK_MS <= end <= after + LOOK_BACK_MS
