"""make plan: sales whose binding limit is known, on the environments of cdk.json as shipped and
changed, with fixed per-request figures (so that a new benchmark run does not move the table)."""

from __future__ import annotations

import copy
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from coupon_cdk.config import CONTEXT_KEY, CdkContextError, cdk_json_context, load
from local.planner.quotas import QUOTAS, QuotaError, with_raised
from local.planner.sale_plan import AVAILABILITY_ANSWER_BYTES, Measured, PlannedSale, SaleError, plan, warmup_snippet
from local.tools import plan as plan_tool

ENVIRONMENTS = cdk_json_context()[CONTEXT_KEY]
FIGURES = Measured(
    intake_cpu_ms={"SUCCESS": 1.2, "SOLD_OUT": 0.8, "DUPLICATE": 0.8},
    reserve_usec={"SUCCESS": 25.0, "SOLD_OUT": 18.0, "DUPLICATE": 21.0},
    reserve_ecpu={"SUCCESS": 6.0, "SOLD_OUT": 5.0, "DUPLICATE": 5.0},
)
WARM = {"starts": "at(2026-12-24T11:45:00)", "ends": "at(2026-12-24T13:00:00)", "provisioned": 300}


def environment(name: str, **changes: dict[str, Any]) -> Any:
    raw = copy.deepcopy(ENVIRONMENTS)
    for section, fields in changes.items():
        raw[name][section] = {**raw[name][section], **fields}
    return load(raw, name, deploying=False)


@pytest.mark.parametrize(
    ("env", "changes", "sale", "raised", "binding", "fits"),
    [
        # a small sale on dev: it fits, the stage throttle is the tightest
        ("dev", {}, "copies=100 users=1000 peak=300/s", {}, "the stage throttle", True),
        ("dev", {}, "copies=5000 users=300000 peak=2000/s", {}, "the stage throttle", False),
        # dev's throttle and concurrency raised, cold: MSK Serverless takes 100 new connections/s
        ("dev", {"api": {"rateLimit": 10000}, "concurrency": {"intake": 1000}}, "copies=5000 users=300000 peak=8000/s",
         {}, "MSK Serverless connection attempts per cluster", False),
        # warmed up: one coupon's slot on the serverless cache binds
        ("dev", {"api": {"rateLimit": 10000}, "concurrency": {"intake": 1000, "warmup": WARM}},
         "copies=5000 users=300000 peak=8000/s", {}, "ElastiCache Serverless ECPUs on one slot", False),
        # small's t3 brokers take 4 new IAM connections/s: even a sale dev takes cold needs a warm-up
        ("dev", {}, "copies=1000 users=20000 peak=400/s", {}, "the stage throttle", True),
        ("small", {}, "copies=1000 users=20000 peak=400/s", {}, "MSK new IAM connections per t3 broker", False),
        # the issue's sale on prod as shipped: the account's throttle binds; a cold opening would also ask
        # the leader broker for too many connections (the test below)
        ("prod", {}, "copies=5000 users=300000 peak=20000/s", {}, "API Gateway throttle", False),
        ("prod", {}, "copies=5000 users=300000 peak=20000/s", {"api_rps": "20000"}, "the stage throttle", False),
        # warmed up, below the throttle: prod's reserved concurrency needs more than a default account has
        ("prod", {"concurrency": {"warmup": WARM}}, "copies=5000 users=300000 peak=9000/s", {},
         "Lambda concurrent executions", False),
        ("prod", {"concurrency": {"warmup": WARM}}, "copies=5000 users=300000 peak=9000/s",
         {"lambda_concurrency": "2000"}, "API Gateway throttle", True),  # prod's stage throttle is the account's
        # throttles raised far: ten requests/s a unit of the intake's reserved concurrency
        ("prod", {"api": {"rateLimit": 100000}, "concurrency": {"warmup": WARM}},
         "copies=5000 users=300000 peak=60000/s", {"api_rps": "100000", "lambda_concurrency": "5000"},
         "requests/s that the intake's reserved concurrency allows", False),
        # ... and the intake's concurrency raised as far as the brokers' IAM connections go: they bind next
        ("prod", {"api": {"rateLimit": 100000}, "concurrency": {"intake": 3200, "warmup": WARM}},
         "copies=5000 users=300000 peak=60000/s", {"api_rps": "100000", "lambda_concurrency": "5000"},
         "requests/s that the intake's reserved concurrency allows", False),
        # 30,000 requests/s on prod: concurrency.intake 3,000, warmed up, the account's quotas raised
        ("prod", {"api": {"rateLimit": 30000}, "concurrency": {"intake": 3000, "warmup": WARM}},
         "copies=5000 users=900000 peak=30000/s holders=0.125", {"api_rps": "30000", "lambda_concurrency": "4000"},
         "API Gateway throttle", True),
    ],
)  # fmt: skip
def test_the_limit_that_binds_first(env, changes, sale, raised, binding, fits):
    result = plan(environment(env, **changes), PlannedSale.parse(sale), with_raised(raised), FIGURES)
    assert result.binding.name.startswith(binding), [(limit.name, round(limit.headroom, 2)) for limit in result.limits]
    assert result.fits is fits


def test_a_cold_opening_of_the_issues_sale_on_prod_asks_the_leader_broker_for_too_many_connections():
    result = plan(environment("prod"), PlannedSale.parse("copies=5000 users=300000 peak=20000/s"), QUOTAS, FIGURES)
    (connections,) = [limit for limit in result.limits if limit.name.startswith("MSK new IAM connections")]
    assert connections.headroom < 1
    assert result.warmup >= result.concurrency


def test_the_memory_of_refusals_takes_one_hot_coupons_slot_from_the_whole_rate_to_holders_and_refreshes():
    """30,000 requests/s for 60 s on one coupon: without the memory every request runs the script;
    with it, after the sell-out, holders' clicks, false positives and a refresh a second per container."""
    sale = PlannedSale.parse("copies=5000 users=900000 peak=30000/s holders=0.125")
    config = environment("dev", api={"rateLimit": 30000}, concurrency={"intake": 1000, "warmup": WARM})
    result = plan(config, sale, with_raised({"api_rps": "30000", "lambda_concurrency": "4000"}), FIGURES)
    opening, after = result.slot
    ecpu = FIGURES.reserve_ecpu
    containers = result.concurrency
    assert after.without_memory == pytest.approx(30_000 * (0.125 * ecpu["DUPLICATE"] + 0.875 * ecpu["SOLD_OUT"]))
    forwarded = 0.125 + FIGURES.false_positives
    assert after.with_memory == pytest.approx(30_000 * forwarded * ecpu["DUPLICATE"] + containers * ecpu["SOLD_OUT"])
    assert after.refreshes == pytest.approx(containers * ecpu["SOLD_OUT"])
    # the opening second: every request asks until the 5,000 copies (and their double clicks) are gone,
    # then each container learns once and reads the filter: 5,000 copies x 24 bits = 15 KB, 15 ECPUs
    assert opening.filter_reads == pytest.approx(containers * 5_000 * 3 / 1024)
    assert opening.without_memory > opening.with_memory > after.with_memory
    (slot,) = [limit for limit in result.limits if limit.name.startswith("ElastiCache Serverless ECPUs")]
    assert slot.demand == pytest.approx(opening.with_memory)


def test_the_share_of_clicks_from_holders_after_the_sell_out_follows_the_clicks_or_is_given():
    assert PlannedSale.parse("copies=100 users=1000 peak=10/s").holder_share == pytest.approx(100 / 1900)
    assert PlannedSale.parse("copies=100 users=1000 peak=10/s clicks=1").holder_share == 0
    assert PlannedSale.parse("copies=100 users=1000 peak=10/s holders=0.125").holder_share == 0.125


def test_one_coupons_shard_binds_once_lambda_and_the_api_have_room():
    config = environment("prod", api={"rateLimit": 100000}, concurrency={"intake": 1000, "warmup": WARM})
    slow = {"SUCCESS": 400.0, "SOLD_OUT": 400.0, "DUPLICATE": 400.0}  # a shard 20 times slower than measured
    figures = Measured(FIGURES.intake_cpu_ms, slow, FIGURES.reserve_ecpu)
    result = plan(config, PlannedSale.parse("copies=5000 users=300000 peak=5000/s"), QUOTAS, figures)
    assert result.binding.name == "one coupon's shard (one Valkey engine thread)"
    # every answer of the opening second a SUCCESS, each with prod's WAIT for a replica
    assert result.binding.value == pytest.approx(1_000_000 / (400 + figures.wait_usec))


def test_a_success_that_waits_for_a_replica_takes_longer_and_a_little_of_the_slot():
    sale = PlannedSale.parse("copies=5000 users=300000 peak=20000/s")
    waiting = plan(environment("prod"), sale, QUOTAS, FIGURES)
    alone = plan(environment("prod", cache={"waitReplicas": 0}), sale, QUOTAS, FIGURES)

    def shard(result: Any) -> Any:
        return next(limit for limit in result.limits if limit.name.startswith("one coupon's shard"))

    assert waiting.concurrency > alone.concurrency
    assert 1 / shard(waiting).value - 1 / shard(alone).value == pytest.approx(
        (5000 / 20000) * FIGURES.wait_usec / 1_000_000
    )  # a quarter of the opening second's answers are SUCCESS, each with its WAIT
    assert any("waits until 1 of the cache's 2 replicas" in note for note in waiting.notes)
    assert not any("cache.waitReplicas" in note for note in alone.notes)


def test_the_warmup_covers_the_peak_and_starts_before_the_brokers_could_take_its_connections():
    sale = PlannedSale.parse("copies=5000 users=300000 peak=20000/s opens=2026-12-24T12:00Z")
    result = plan(environment("prod"), sale, QUOTAS, FIGURES)
    assert result.warmup >= result.concurrency > 0
    # Lambda prepares for 2 minutes, then INITs connect twice each at 100/s on the leader broker
    assert result.warmup_lead_min * 60 >= 120 + result.warmup * 2 / 100
    starts = datetime(2026, 12, 24, 12, tzinfo=UTC) - timedelta(minutes=result.warmup_lead_min)
    assert warmup_snippet(result, sale) == (
        f'"warmup": {{"starts": "at({starts:%Y-%m-%dT%H:%M:%S})", "ends": "at(2026-12-24T13:00:00)", '
        f'"provisioned": {result.warmup}}}'
    )


def test_a_small_sale_needs_no_warmup_and_the_database_drains_at_the_processing_limit():
    result = plan(environment("dev"), PlannedSale.parse("copies=100 users=1000 peak=300/s"), QUOTAS, FIGURES)
    assert result.warmup == 0
    assert result.drain_s == pytest.approx(100 / 200)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("copies=5000 users=300000", "the sale needs peak"),
        ("copies=5000 users=300000 peak=fast", "peak must be a whole number from 1, got 'fast'"),
        ("copies=5000 users=300000 peak=10/s holders=2", "holders must be a share from 0 to 1, got '2'"),
        ("copies=0 users=1 peak=1", "copies must be a whole number from 1"),
        ("copies=1 users=1 peak=1 speed=9", "unknown speed"),
        ("copies=1 users=1 peak=1 opens=tomorrow", "opens must be an ISO 8601 time"),
        ("copies=1 users=1 peak=1 opens=2026-12-24T12:00+09:00", "opens must be in UTC"),
        ("copies=1 users=1 peak=1 success_ms=-3", "success_ms must be milliseconds above 0"),
        ("copies=1 users=1 peak=1 waiting=300000 poll=0s", "poll must be seconds above 0"),
        ("copies=1 users=1 peak=1 waiting=many", "waiting must be a whole number from 1"),
        ("copies", "'copies' is not key=value"),
    ],
)
def test_a_malformed_sale_is_refused_with_what_is_wrong(text, message):
    with pytest.raises(SaleError, match=message):
        PlannedSale.parse(text)


@pytest.mark.parametrize(
    ("raised", "message"),
    [
        ({"api_rpm": "1"}, "no quota 'api_rpm'"),
        ({"lambda_scale_out": "5000"}, "is fixed by AWS"),
        ({"api_rps": "lots"}, "api_rps must be a number"),
        ({"api_rps": "0"}, "api_rps must be above 0"),
    ],
)
def test_a_raised_quota_must_name_a_raisable_quota_and_a_number(raised, message):
    with pytest.raises(QuotaError, match=message):
        with_raised(raised)


def test_every_quota_names_its_page():
    assert all(quota.source.startswith("https://docs.aws.amazon.com/") for quota in QUOTAS.values())


def test_the_tool_prints_the_binding_limit_and_exits_1_when_the_sale_does_not_fit(capsys):
    sale = "copies=5000 users=300000 peak=20000/s"
    assert plan_tool.main(["--env", "prod", "--sale", sale]) == 1
    printed = capsys.readouterr().out
    binding = plan(load(ENVIRONMENTS, "prod", deploying=False), PlannedSale.parse(sale)).binding
    assert binding.headroom < 1
    assert f"Binds first: {binding.name} (headroom {binding.headroom:.2f})." in printed
    assert "| limit | value | the sale's demand | headroom | source |" in printed


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--env", "local", "--sale", "copies=1 users=1 peak=1"], "local is not an AWS environment"),
        (["--env", "staging", "--sale", "copies=1 users=1 peak=1"], "unknown environment 'staging'"),
        (["--env", "dev", "--sale", "copies=1 users=1 peak=1", "--quotas", "api_rps=x"], "api_rps must be a number"),
    ],
)
def test_the_tool_refuses_what_it_cannot_plan_with_exit_2(argv, message, capsys):
    assert plan_tool.main(argv) == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("intake", [1000, 3000, 3271, 3272])
def test_the_plan_and_the_config_agree_on_the_brokers_iam_connections(intake):
    """The reserved concurrency a rate needs fits the plan's connection budget exactly when the
    config accepts it (coupon_cdk.config.iam_connections: one leader broker, every environment)."""
    changes = {"api": {"rateLimit": 10 * intake}, "concurrency": {"intake": 1000, "warmup": WARM}}
    sale = PlannedSale.parse(f"copies=5000 users=3000000 peak={10 * intake}/s")
    result = plan(environment("prod", **changes), sale, with_raised({"api_rps": str(10 * intake)}), FIGURES)
    (budget,) = [limit for limit in result.limits if limit.name.startswith("IAM connections one broker holds")]
    try:
        environment("prod", concurrency={"intake": intake})
        accepted = True
    except CdkContextError:
        accepted = False
    assert (budget.headroom >= 1) is accepted


def test_cold_preflights_count_against_api_gateways_throttles_and_warm_ones_do_not():
    """One OPTIONS per user's first click in the opening second, where pages call the API."""
    sale = "copies=5000 users=300000 peak=8000/s clicks=2"
    warm = plan(environment("prod"), PlannedSale.parse(sale), measured=FIGURES)
    cold = plan(environment("prod"), PlannedSale.parse(f"{sale} preflights=cold"), measured=FIGURES)

    def stage(result: Any) -> Any:
        return next(limit for limit in result.limits if limit.name.startswith("the stage throttle"))

    assert (stage(warm).demand, stage(cold).demand) == (8000, 8000 + 4000)
    assert any("4,000 preflights (OPTIONS)" in note and "not counted above" in note for note in warm.notes)
    assert any("counted above (preflights=cold)" in note for note in cold.notes)


def test_waiting_pages_poll_the_edge_which_lets_one_a_second_per_coupon_through():
    """300,000 pages polling once a second: all of it at the edge (billed: the request, the
    function's run, the answer's bytes out), one request a second past it whatever the pages'
    origins (the cache key is the path alone); without pages, no polling at all."""
    sale = "copies=5000 users=300000 peak=8000/s"
    quiet = plan(environment("prod"), PlannedSale.parse(sale), measured=FIGURES)
    waiting = plan(environment("prod"), PlannedSale.parse(f"{sale} waiting=300000 poll=2s"), measured=FIGURES)
    listed = environment("prod", api={"corsOrigins": ["https://a.example.com", "https://b.example.com"]})
    two_origins = plan(listed, PlannedSale.parse(f"{sale} waiting=300000"), measured=FIGURES)

    assert quiet.polling is None
    assert waiting.polling is not None
    assert two_origins.polling is not None
    assert (waiting.polling.at_edge, waiting.polling.through_edge) == (150_000, 1)
    per_poll = 0.01 / 10_000 + 0.10 / 1_000_000 + 0.085 * AVAILABILITY_ANSWER_BYTES / 1e9
    assert waiting.polling.usd_per_minute == pytest.approx(150_000 * 60 * per_poll)
    assert (two_origins.polling.at_edge, two_origins.polling.through_edge) == (300_000, 1)
    past_edge = [limit for limit in two_origins.limits if "polls past the edge" in limit.name]
    assert [(limit.value, limit.demand) for limit in past_edge] == [(10 * 100, 1)]
    assert any("158,000 requests/s at the stage" in note for note in waiting.notes)


def test_without_cors_origins_there_is_no_preflight():
    result = plan(environment("dev"), PlannedSale.parse("copies=50 users=300 peak=100/s preflights=cold"),
                  measured=FIGURES)  # fmt: skip
    stage = next(limit for limit in result.limits if limit.name.startswith("the stage throttle"))
    assert stage.demand == 100
    assert not any("preflights" in note for note in result.notes)


def test_preflights_are_warm_or_cold():
    with pytest.raises(SaleError, match="preflights=lukewarm: warm"):
        PlannedSale.parse("copies=5 users=30 peak=10/s preflights=lukewarm")


def test_an_environment_without_a_write_limit_is_refused_with_what_the_plan_needs():
    raw = copy.deepcopy(ENVIRONMENTS)
    del raw["prod"]["processingLimit"]
    with pytest.raises(SaleError, match="prod has no processingLimit: make plan times the workers' writes by it"):
        plan(load(raw, "prod", deploying=False), PlannedSale.parse("copies=1 users=1 peak=1"), QUOTAS, FIGURES)
