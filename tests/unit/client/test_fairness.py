"""The measure of arrival order on staged sales whose truth is known: every figure exactly, for
the cases a real sale has most (a lost answer retried, a 503 retried, a give-back, a reordering
on the path, a tie, the memory's repeated refusals), read from the lines the intake writes."""

from __future__ import annotations

import json

import pytest

from coupon_client.fairness import (
    Click,
    Fairness,
    Line,
    Overtaking,
    Waits,
    clicks,
    coupon_pattern,
    lines_of,
    measure,
    percentile,
    read_lines,
)

T = 1_764_590_400_000  # the opening, epoch ms
HOUR = 3_600_000


def won(arrived: int, request: str, *, decided: int | None = None, replays: int | None = None) -> Line:
    return Line(T + arrived, T + (arrived if decided is None else decided), "SUCCESS", request,
                None if replays is None else T + replays)  # fmt: skip


def lost(arrived: int, request: str, *, decided: int | None = None, replays: int | None = None) -> Line:
    return Line(T + arrived, T + (arrived if decided is None else decided), "SOLD_OUT", request,
                None if replays is None else T + replays)  # fmt: skip


def figures(lines: list[Line]) -> tuple[int, int, int, int, int]:
    found = measure(lines)
    return found.winners, found.losers, found.inversion_window_ms, found.early_losers, found.late_winners


def test_a_lost_answer_retried_after_a_loser_is_one_winner_at_its_first_arrival():
    """One copy: A wins at +100 but its answer is lost, B is refused at +200, A's retry at +1,600
    gets its SUCCESS back (the reservation's time repeated)."""
    sale = [won(100, "a"), lost(200, "b"), won(1_600, "a", replays=100)]
    assert figures(sale) == (1, 1, 0, 0, 0)
    assert measure(sale).clicks == 2


def test_a_winner_whose_first_attempt_left_no_line_arrived_by_its_reservation():
    """A reserves at +100 and the intake times out (the gateway's 503 UNCONFIRMED: no line), B is
    refused at +200, A's retry at +1,600 gets its SUCCESS back: A arrived by +100 at the latest."""
    sale = [lost(200, "b"), won(1_600, "a", replays=100)]
    assert figures(sale) == (1, 1, 0, 0, 0)
    assert clicks(sale)[1] == Click(T + 100, "SUCCESS", T + 100, 1)


def test_a_winner_whose_reserving_attempt_wrote_a_line_keeps_its_own_arrival():
    """The gateway's clock 10 ms ahead of Redis': W's own SUCCESS line arrived at +300, decided
    at +290, and its retry replays +290. Its arrival is its line's (no clock corrected by the
    other), so the loser that arrived at +295 and was refused at +310 was overtaken by 5 ms."""
    sale = [won(300, "w", decided=290), lost(295, "l", decided=310), won(900, "w", replays=290)]
    assert figures(sale) == (1, 1, 5, 1, 0)


def test_winners_are_taken_in_order_of_their_takes_not_of_their_lines():
    """In log order, a winner whose first attempt was a 503 comes before one that took earlier;
    the loser was decided after both takes and overtaken by the earlier taker only."""
    sale = [
        Line(T + 36, T + 37, "UNAVAILABLE", "c1"),
        won(33, "c0", decided=45),
        lost(23, "c3", decided=56),
        won(62, "c1", decided=66),
    ]
    assert figures(sale) == (2, 1, 10, 1, 1)
    assert measure(sale).overtaken == (Overtaking(T + 23, T + 56, T + 33, T + 45),)


def test_an_unconfirmed_answer_retried_is_one_winner():
    sale = [Line(T + 100, T + 100, "UNCONFIRMED", "a"), lost(200, "b"), won(1_600, "a", replays=100)]
    assert figures(sale) == (1, 1, 0, 0, 0)


def test_a_reordering_on_the_path_is_its_exact_window():
    """The loser arrived first but waited (a cold start) until after the winner took the copy."""
    sale = [lost(200, "l", decided=350), won(300, "w", decided=310), lost(400, "later")]
    assert figures(sale) == (1, 2, 100, 1, 0)
    assert measure(sale).overtaken == (Overtaking(T + 200, T + 350, T + 300, T + 310),)


def test_a_give_back_an_hour_later_is_a_late_winner_not_an_inversion():
    sale = [won(100, "w1"), lost(200, "l1"), lost(300, "l2"), won(HOUR + 100, "w2")]
    found = measure(sale)
    assert figures(sale) == (2, 2, 0, 0, 1)
    assert found.late_takes == (T + HOUR + 100, T + HOUR + 100)


def test_a_refusal_the_memory_repeats_is_decided_when_redis_decided_it():
    """A copy put back at +1 h and taken at +1 h 100 ms; a loser that arrived before the taker
    was answered from a container's memory, which repeats what Redis said half a second earlier:
    it was decided before the copy came back, so it was not overtaken."""
    sale = [won(100, "w1"), lost(200, "l1"), lost(HOUR + 50, "l2", decided=HOUR + 60, replays=HOUR - 500),
            won(HOUR + 100, "w2")]  # fmt: skip
    assert figures(sale) == (2, 2, 0, 0, 1)
    asked_redis = [*sale[:2], lost(HOUR + 50, "l2", decided=HOUR + 150), sale[3]]
    assert figures(asked_redis) == (2, 2, 50, 1, 1)  # without the memory it would have been


def test_a_503_retried_counts_from_its_first_arrival():
    """C arrives first and is answered 503; W takes the last copy; C's retry is refused: C was
    overtaken by W, by the 50 ms between their first arrivals."""
    sale = [Line(T + 100, T + 101, "UNAVAILABLE", "c"), won(150, "w"), lost(1_100, "c")]
    assert figures(sale) == (1, 1, 50, 1, 0)
    assert sorted(clicks(sale), key=lambda c: c.arrived_at) == [
        Click(T + 100, "SOLD_OUT", T + 1_100, 2),
        Click(T + 150, "SUCCESS", T + 150, 1),
    ]


def test_arrivals_in_one_millisecond_are_no_inversion_but_a_refusal_in_the_takes_millisecond_came_after_it():
    """Redis runs one script at a time: a SOLD_OUT in the millisecond of the take that sold out
    came after the take, so a loser who arrived first was overtaken."""
    assert figures([won(100, "w", decided=101), lost(100, "l", decided=102)]) == (1, 1, 0, 0, 0)
    assert figures([won(100, "w", decided=102), lost(90, "l", decided=102)]) == (1, 1, 10, 1, 0)
    assert figures([won(100, "w", decided=103), lost(90, "l", decided=102)]) == (1, 1, 0, 0, 1)  # a copy put back


def test_an_unconfirmed_answer_whose_click_asked_the_status_route_took_its_copy():
    """The click's client settles an UNCONFIRMED on the status route and sends nothing again:
    its reservation, kept, is a take."""
    sale = [Line(T + 950, T + 1_000, "UNCONFIRMED", "w"), lost(900, "l", decided=1_005)]
    assert figures(sale) == (1, 1, 50, 1, 0)


def test_the_window_is_the_largest_overtaking_and_each_loser_counts_once():
    """l1 and l2 were overtaken by both winners (each counted once, by the later arrival); l3
    arrived after both."""
    sale = [lost(100, "l1", decided=500), lost(150, "l2", decided=500), won(300, "w1", decided=301),
            won(400, "w2", decided=401), lost(450, "l3", decided=500)]  # fmt: skip
    found = measure(sale)
    assert (found.inversion_window_ms, found.early_losers) == (300, 2)
    assert found.overtaken == (
        Overtaking(T + 100, T + 500, T + 400, T + 401),
        Overtaking(T + 150, T + 500, T + 400, T + 401),
    )


def test_a_loser_decided_before_a_later_winner_took_a_put_back_copy_is_not_overtaken():
    sale = [won(100, "w1"), lost(150, "l"), won(200, "w2", decided=1_000)]  # w2: a copy released at +900
    assert figures(sale) == (2, 1, 0, 0, 1)


def test_requests_without_a_key_are_each_a_click_of_their_own():
    sale = [Line(T + 1, T + 2, "SOLD_OUT"), Line(T + 3, T + 4, "SOLD_OUT"), won(0, "w")]
    assert (measure(sale).clicks, measure(sale).losers) == (3, 2)


def test_waits_are_per_answer_with_their_minimum_so_a_clock_skew_shows():
    sale = [won(100, "w", decided=110), lost(120, "l", decided=119), lost(130, "m", decided=135),
            Line(T + 140, T + 141, "DUPLICATE", "w")]  # fmt: skip
    assert measure(sale).waits == {
        "SUCCESS": Waits(1, 10, 10, 10, 10),
        "SOLD_OUT": Waits(2, -1, -1, 5, 5),
        "DUPLICATE": Waits(1, 1, 1, 1, 1),
    }


def test_a_sale_without_winners_or_losers_has_no_window():
    assert figures([won(1, "a"), won(2, "b")]) == (2, 0, 0, 0, 0)
    assert figures([lost(1, "a"), lost(2, "b")]) == (0, 2, 0, 0, 0)
    assert measure([]) == Fairness(0, 0, 0, 0, 0, 0, 0, None)


def test_percentiles_are_by_nearest_rank():
    values = list(range(1, 101))
    assert [percentile(values, q) for q in (1, 50, 99, 100)] == [1, 50, 99, 100]
    assert percentile([3, 1, 2], 50) == 2


def test_the_lines_are_read_from_the_intakes_log_lines_of_the_coupon():
    def line(**fields: object) -> str:
        return "2026-12-24T12:00:00.250Z " + json.dumps({"_aws": {}, "couponId": 3, **fields})

    texts = [
        line(outcome="SOLD_OUT", arrivedAt=T, decidedAt=T + 5, requestId="r-1"),
        line(outcome="SUCCESS", arrivedAt=T + 1, decidedAt=T + 9, requestId="r-2", replays=T + 2),
        line(outcome="SOLD_OUT", decidedAt=T),  # no arrival: left out
        line(outcome="SOLD_OUT", arrivedAt=True, decidedAt=T),  # not a time
        line(outcome="SOLD_OUT", arrivedAt=T, decidedAt=T, couponId=4),
        '{"decidedAt": 1, "broken',
        "START RequestId: 1",
    ]
    assert lines_of(texts, 3) == [Line(T, T + 5, "SOLD_OUT", "r-1"), Line(T + 1, T + 9, "SUCCESS", "r-2", T + 2)]


def test_the_summary_says_every_figure():
    rows = dict(measure([won(100, "w1"), lost(50, "l", decided=200), won(HOUR, "w2")]).summary())
    assert rows["inversion window"] == "50 ms"
    assert rows["losers overtaken by a later arrival"] == "1 of 1"
    assert rows["late winners (a copy put back, taken later)"].startswith("1, ")
    assert rows["arrival to decision, SOLD_OUT"] == "min 150 ms, p50 150 ms, p99 150 ms, max 150 ms"


class Paged:
    """FilterLogEvents' paginator over pages of lines, recording what it was asked."""

    def __init__(self, pages: list[list[str]]) -> None:
        self.pages, self.asked = pages, {}

    def get_paginator(self, name: str) -> Paged:
        assert name == "filter_log_events"
        return self

    def paginate(self, **asked: object) -> list[dict[str, object]]:
        self.asked = asked
        return [{"events": [{"message": text} for text in page]} for page in self.pages]


def test_every_page_of_the_log_group_is_read():
    logs = Paged([["a", "b"], [], ["c"]])
    assert list(read_lines(logs, "/group", (T, T + HOUR), coupon_pattern(7))) == ["a", "b", "c"]
    assert logs.asked == {"logGroupName": "/group", "startTime": T, "endTime": T + HOUR,
                          "filterPattern": "{ $.couponId = 7 }"}  # fmt: skip
    with pytest.raises(ValueError, match="invalid literal"):
        coupon_pattern("7 || true")  # type: ignore[arg-type]


STAGED = [lost(100, "l1", decided=500), won(300, "w1", decided=301), won(400, "w1", decided=900, replays=301),
          Line(T + 450, T + 451, "DUPLICATE", "d"), Line(T + 460, T + 470, "DUPLICATE", "d"),
          won(HOUR, "late", decided=HOUR + 5)]  # fmt: skip


def test_the_figures_as_json_are_every_figure_by_name():
    assert measure(STAGED).as_json(detail=1) == {
        "lines": 6, "clicks": 4, "winners": 2, "losers": 1, "inversionWindowMs": 200, "earlyLosers": 1,
        "lateWinners": 1, "lateTakes": {"first": T + HOUR + 5, "last": T + HOUR + 5},
        "waits": {
            "DUPLICATE": {"answers": 2, "minMs": 1, "p50Ms": 1, "p99Ms": 10, "maxMs": 10},
            "SOLD_OUT": {"answers": 1, "minMs": 400, "p50Ms": 400, "p99Ms": 400, "maxMs": 400},
            "SUCCESS": {"answers": 3, "minMs": 1, "p50Ms": 5, "p99Ms": 500, "maxMs": 500},
        },
        "overtaken": [{"loserArrivedAt": T + 100, "loserDecidedAt": T + 500, "winnerArrivedAt": T + 300,
                       "winnerTookAt": T + 301, "ms": 200}],
    }  # fmt: skip
    assert measure(STAGED).as_json()["overtaken"] == []
    assert measure([won(1, "a")]).as_json()["lateTakes"] is None


def test_the_summary_says_each_figure_in_words():
    assert measure(STAGED).summary() == [
        ("clicks", "4 (6 answers): 2 won, 1 lost"),
        ("inversion window", "200 ms"),
        ("losers overtaken by a later arrival", "1 of 1"),
        ("late winners (a copy put back, taken later)", "1, taking copies 0.0 s apart"),
        ("arrival to decision, DUPLICATE", "min 1 ms, p50 1 ms, p99 10 ms, max 10 ms"),
        ("arrival to decision, SOLD_OUT", "min 400 ms, p50 400 ms, p99 400 ms, max 400 ms"),
        ("arrival to decision, SUCCESS", "min 1 ms, p50 5 ms, p99 500 ms, max 500 ms"),
    ]
    assert dict(measure([won(1, "a")]).summary())["late winners (a copy put back, taken later)"] == "none"


def test_a_clicks_attempts_are_counted_and_a_click_that_neither_won_nor_lost_keeps_its_last_answer():
    sale = [Line(T + 5, T + 6, "UNAVAILABLE", "x"), Line(T + 9, T + 12, "NOT_OPEN", "x"),
            Line(T + 7, T + 8, "UNCONFIRMED", "y"), won(20, "y", decided=30, replays=8),
            lost(40, "z", decided=45), lost(50, "z", decided=52, replays=41)]  # fmt: skip
    assert sorted(clicks(sale), key=lambda c: c.arrived_at) == [
        Click(T + 5, "NOT_OPEN", None, 2),
        Click(T + 7, "SUCCESS", T + 8, 2),
        Click(T + 40, "SOLD_OUT", T + 41, 2),
    ]


def test_late_takes_are_the_first_and_the_last_and_said_seconds_apart():
    sale = [won(1, "w"), lost(2, "l"), won(HOUR, "late-1"), won(HOUR + 100_000, "late-2")]
    found = measure(sale)
    assert found.as_json()["lateTakes"] == {"first": T + HOUR, "last": T + HOUR + 100_000}
    assert dict(found.summary())["late winners (a copy put back, taken later)"] == "2, taking copies 100.0 s apart"


def test_the_latest_arrival_among_the_winners_that_took_first_overtook_most():
    """W1 took first but arrived last (the gateway's clock ahead of Redis'): the prefix of winners
    by take keeps the latest arrival, and no clock is corrected by the other."""
    sale = [won(300, "w1", decided=10), won(200, "w2", decided=20), lost(100, "l", decided=25)]
    assert measure(sale).overtaken == (Overtaking(T + 100, T + 25, T + 300, T + 10),)


def test_the_99th_percentile_is_not_the_maximum_of_a_hundred_and_one():
    assert percentile(list(range(1, 102)), 100) == 101
    waits = [Line(T, T + ms, "SOLD_OUT", f"r{ms}") for ms in range(1, 102)]
    assert measure(waits).waits["SOLD_OUT"] == Waits(101, 1, 51, 100, 101)


def test_a_line_of_another_kind_or_coupon_before_the_sales_lines_is_passed_over():
    good = json.dumps({"couponId": 3, "outcome": "SOLD_OUT", "arrivedAt": T, "decidedAt": T, "requestId": "r"})
    texts = ["no json here", '{"decidedAt": broken', json.dumps({"couponId": 4, "arrivedAt": T, "decidedAt": T}),
             json.dumps({"couponId": 3, "arrivedAt": T, "decidedAt": T, "requestId": 7}), good]  # fmt: skip
    assert lines_of(texts, 3) == [Line(T, T, "None", None), Line(T, T, "SOLD_OUT", "r")]


def test_a_page_without_events_is_read_as_none():
    class Pages(Paged):
        def paginate(self, **asked: object) -> list[dict[str, object]]:
            return [{"events": [{"message": "a"}]}, {}]

    assert list(read_lines(Pages([]), "/group", (T, T + 1))) == ["a"]
    logs = Paged([["b"]])
    assert list(read_lines(logs, "/group", (T, T + 1))) == ["b"]
    assert logs.asked["filterPattern"] == ""  # every line, without a pattern
