"""Where the local tools find the intake's metrics lines: standard output, while in-process."""

from __future__ import annotations

import sys
import threading

from local.testkit.intake_lines import PrintedLines


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
