"""The measure of arrival order, on a staged sale whose arrivals and outcomes are known: every
figure checked exactly, from every answer and from Logs Insights' results of the same sale."""

from __future__ import annotations

import botocore.session
import pytest
from botocore.stub import ANY, Stubber

from coupon_client.fairness import (
    Answer,
    Fairness,
    QueryError,
    Waits,
    by_outcome_query,
    detail_query,
    early_losers_query,
    from_insights,
    gateway_request_id,
    measure,
    of_sale,
    percentile,
)

T = 1_764_590_400_000  # the opening, epoch ms

# Two copies, then a cancel puts one back and a late arrival takes it: a late winner after a release.
STAGED = [
    Answer(T + 100, T + 110, "SUCCESS"),  # first
    Answer(T + 105, T + 140, "SUCCESS"),  # second: the stock is gone
    Answer(T + 120, T + 125, "SOLD_OUT"),  # waited 280 ms for the late winner below
    Answer(T + 130, T + 131, "SOLD_OUT"),
    Answer(T + 150, T + 151, "DUPLICATE"),  # a holder's second click: neither winner nor loser
    Answer(T + 400, T + 402, "SUCCESS"),  # the late winner, after a cancel released a copy
    Answer(T + 500, T + 500, "SOLD_OUT"),  # arrived after the last winner: not an early loser
]
EXPECTED = Fairness(
    winners=3,
    losers=3,
    inversion_window_ms=280,
    early_losers=2,
    last_winner_at=T + 400,
    first_loser_at=T + 120,
    waits={
        "SUCCESS": Waits(3, 10, 35, 35),  # waits 10, 35, 2
        "SOLD_OUT": Waits(3, 1, 5, 5),  # waits 5, 1, 0
        "DUPLICATE": Waits(1, 1, 1, 1),
    },
)


def test_a_staged_sale_gives_every_figure_exactly():
    assert measure(STAGED) == EXPECTED
    assert measure(reversed(STAGED)) == EXPECTED  # the order answers are read in does not matter


def test_a_sale_in_arrival_order_has_no_inversion_and_no_early_loser():
    fair = [Answer(T + 1, T + 2, "SUCCESS"), Answer(T + 2, T + 3, "SUCCESS"), Answer(T + 3, T + 4, "SOLD_OUT")]
    figures = measure(fair)
    assert (figures.inversion_window_ms, figures.early_losers) == (0, 0)
    assert (figures.last_winner_at, figures.first_loser_at) == (T + 2, T + 3)


@pytest.mark.parametrize("outcome", ["SUCCESS", "SOLD_OUT"])
def test_a_sale_without_winners_or_without_losers_has_no_window(outcome):
    figures = measure([Answer(T, T + 1, outcome), Answer(T + 9, T + 9, outcome)])
    assert (figures.inversion_window_ms, figures.early_losers) == (0, 0)


def test_percentiles_are_by_nearest_rank():
    values = list(range(1, 101))  # 1..100
    assert [percentile(values, q) for q in (1, 50, 99, 100)] == [1, 50, 99, 100]
    assert percentile([7], 99) == 7
    assert percentile([3, 1, 2], 50) == 2


def _insights(rows: list[dict[str, str]]) -> list[list[dict[str, str]]]:
    """Rows as GetQueryResults gives them: every value a string, with its @ptr."""
    return [[{"field": name, "value": value} for name, value in row.items()] + [{"field": "@ptr", "value": "x"}]
            for row in rows]  # fmt: skip


BY_OUTCOME = _insights([
    {"outcome": "SUCCESS", "answers": "3", "firstArrival": str(T + 100), "lastArrival": str(T + 400),
     "p50": "10", "p99": "35", "maxWait": "35"},
    {"outcome": "SOLD_OUT", "answers": "3", "firstArrival": str(T + 120), "lastArrival": str(T + 500),
     "p50": "1", "p99": "5", "maxWait": "5"},
    {"outcome": "DUPLICATE", "answers": "1", "firstArrival": str(T + 150), "lastArrival": str(T + 150),
     "p50": "1", "p99": "1", "maxWait": "1"},
])  # fmt: skip


def test_logs_insights_results_of_the_same_sale_give_the_same_figures():
    assert from_insights(BY_OUTCOME).last_winner_at == T + 400  # what the early losers' query is asked with
    assert from_insights(BY_OUTCOME, _insights([{"earlyLosers": "2"}])) == EXPECTED


def test_logs_insights_results_of_a_sale_without_winners():
    only_losers = _insights([{"outcome": "SOLD_OUT", "answers": "2", "firstArrival": str(T), "lastArrival": str(T + 9),
                              "p50": "0.5", "p99": "1.0", "maxWait": "1"}])  # fmt: skip
    assert from_insights(only_losers).last_winner_at is None
    figures = from_insights(only_losers, None)
    assert (figures.winners, figures.losers, figures.inversion_window_ms, figures.early_losers) == (0, 2, 0, 0)
    assert figures.waits == {"SOLD_OUT": Waits(2, 0.5, 1.0, 1.0)}


def test_the_queries_name_the_coupon_and_the_fields_the_intakes_line_carries():
    """The field names are the intake's (tests/unit/functions/intake/test_observability.py holds
    the line to them); an id is formatted as an integer, never spliced in as text."""
    queries = [by_outcome_query(42), early_losers_query(42, T + 400), detail_query(42, EXPECTED)]
    assert all(query.startswith("filter couponId = 42 and ispresent(arrivedAt) and ispresent(decidedAt)")
               for query in queries)  # fmt: skip
    assert "stats count(*) as answers" in queries[0]
    assert "by outcome" in queries[0]
    assert f"outcome = 'SOLD_OUT' and arrivedAt < {T + 400}" in queries[1]
    assert f"arrivedAt > {T + 120}" in queries[2]
    assert "correlation_id, @logStream" in queries[2]
    with pytest.raises(ValueError, match="invalid literal"):
        by_outcome_query("42 or 1=1")  # type: ignore[arg-type]


def test_the_json_and_the_summary_say_the_same_figures():
    as_json = EXPECTED.as_json()
    assert as_json["inversionWindowMs"] == 280
    assert as_json["earlyLosers"] == 2
    assert as_json["waits"]["SUCCESS"] == {"answers": 3, "p50Ms": 10, "p99Ms": 35, "maxMs": 35}
    assert dict(EXPECTED.summary())["inversion window"] == "280 ms"
    assert dict(EXPECTED.summary())["losers who arrived before the last winner"] == "2 of 3"


def _stubbed_logs(queries: list[tuple[str, list]], span: tuple[int, int] = (100, 200)) -> tuple[object, Stubber]:
    """A botocore Logs client whose queries over ``span`` answer ``queries`` in order: (status, rows)."""
    logs = botocore.session.get_session().create_client("logs", region_name="eu-west-1",
                                                        aws_access_key_id="a", aws_secret_access_key="b")  # fmt: skip
    stubber = Stubber(logs)
    for number, (status, rows) in enumerate(queries):
        stubber.add_response("start_query", {"queryId": f"q{number}"}, {
            "logGroupName": "intake-logs", "startTime": span[0], "endTime": span[1], "queryString": ANY})  # fmt: skip
        stubber.add_response("get_query_results", {"status": "Running", "results": []}, {"queryId": f"q{number}"})
        stubber.add_response("get_query_results", {"status": status, "results": rows}, {"queryId": f"q{number}"})
    stubber.activate()
    return logs, stubber


DETAIL = _insights([{"arrivedAt": str(T + 120), "decidedAt": str(T + 125), "outcome": "SOLD_OUT",
                     "correlation_id": "gw-3", "@logStream": "2026/12/24/[$LATEST]abc"}])  # fmt: skip


def test_a_finished_sales_figures_come_from_three_logs_insights_queries():
    logs, stubber = _stubbed_logs([("Complete", BY_OUTCOME), ("Complete", _insights([{"earlyLosers": "2"}])),
                                   ("Complete", DETAIL)])  # fmt: skip
    slept: list[float] = []

    figures, rows = of_sale(logs, "intake-logs", 42, (100, 200), detail=10, sleep=slept.append)

    assert figures == EXPECTED
    assert rows == [{"arrivedAt": str(T + 120), "decidedAt": str(T + 125), "outcome": "SOLD_OUT",
                     "correlation_id": "gw-3", "@logStream": "2026/12/24/[$LATEST]abc"}]  # fmt: skip
    assert slept == [1.0, 1.0, 1.0]  # each query looked at again once it was still running
    stubber.assert_no_pending_responses()


def test_a_query_that_fails_is_an_error_naming_how_it_ended():
    logs, _ = _stubbed_logs([("Failed", [])])
    with pytest.raises(QueryError, match="the query ended Failed"):
        of_sale(logs, "intake-logs", 42, (100, 200), detail=10, sleep=lambda _: None)


def test_the_gateways_request_id_is_read_from_an_answers_headers_in_any_case():
    assert gateway_request_id({"Content-Type": "application/json", "x-amzn-RequestId": "gw-1"}) == "gw-1"
    assert gateway_request_id({"X-AMZN-REQUESTID": "gw-2"}) == "gw-2"
    assert gateway_request_id({}) is None
