"""Will a sale fit an environment? Each AWS limit it meets, its demand on it, and what to do.

``plan(config, sale)`` is what ``make plan`` prints. A limit's *headroom* is its value over the
sale's demand on it: below 1 the sale does not fit, and the limit with the least headroom binds
first. The quotas are ``quotas.py``'s cited table (raised ones passed in); the per-request
figures are ``MEASURED``, each from a benchmark or a test named beside it, and the two figures
this machine cannot measure (the round trips inside AWS) are assumptions you replace with a
rehearsal's ``IssueLatency`` metric (``success_ms=``/``other_ms=`` in the sale).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from coupon_cdk.config import (
    BUILDER_CONCURRENCY,
    INIT_CONNECTION_ATTEMPTS,
    REBUILD_CONCURRENCY,
    RELAY_CONCURRENCY,
    AwsEnvironment,
    EnvironmentConfig,
    iam_connections,
    iam_connections_taken,
)
from coupon_core.domain.availability import AVAILABILITY_MS
from local.planner.prices import PRICES
from local.planner.quotas import QUOTAS, Quota
from lua_redis.store import size_bits

LAMBDA_MEMORY = "https://docs.aws.amazon.com/lambda/latest/dg/configuration-memory.html"
ONE_VCPU_MB = 1_769  # "At 1,769 MB, a function has the equivalent of one vCPU" (LAMBDA_MEMORY)
AVAILABILITY_ANSWER_BYTES = 800  # an availability answer as the edge sends it: JSON under 300 bytes, headers (est.)


@dataclass(frozen=True)
class Measured:
    """Per-request figures measured here (docs/benchmarks.md has each run and its command)."""

    intake_cpu_ms: dict[str, float]  # bench/intake.py, the loads of one answer each
    # bench/reserve.py ceiling --depth 1: one call at a time per connection over TLS, as a Lambda
    # container sends them; the engine thread's whole CPU per reserve, and that over a SET's
    reserve_usec: dict[str, float]
    reserve_ecpu: dict[str, float]
    redis_rtt_ms: float = 1.0  # assumed: one round trip to the cache inside the VPC
    produce_ack_ms: float = 10.0  # assumed: an acks=all produce to MSK across AZs
    # The memory of refusals (bench/refusal_memory.py): a refusal from memory costs the intake this
    # share of one from Redis, and no round trip; a holders' filter's false positives (a request
    # that asks Redis needlessly), taken high: a keyed request tests its user and its key.
    remembered_share: float = 0.18
    false_positives: float = 0.01
    memory_s: float = 1.0  # ANSWER_MEMORY_MS as deployed: each container asks Redis again once a second
    # bench/reserve.py wait (two replicas): a SUCCESS that waits for one (cache.waitReplicas)
    # answers this much later (p50 3.42 ms against 1.25, the replicas on the same host; on AWS a
    # replica's AZ adds its round trip), and confirm.lua, its WAIT and the replicas' acknowledgements
    # cost the primary's engine thread this, per SUCCESS (63.13 µs a reserve against 45.62)
    replica_wait_ms: float = 2.2
    wait_usec: float = 17.5


MEASURED = Measured(  # docs/benchmarks.md, runs of 2026-12-01 (the memory's: 2026-12-03)
    intake_cpu_ms={"SUCCESS": 2.07, "SOLD_OUT": 0.42, "DUPLICATE": 0.48},
    reserve_usec={"SUCCESS": 24.60, "SOLD_OUT": 18.47, "DUPLICATE": 21.60},
    reserve_ecpu={"SUCCESS": 2.8, "SOLD_OUT": 2.1, "DUPLICATE": 2.4},
)


class SaleError(ValueError):
    """The sale's description is malformed."""


@dataclass(frozen=True)
class PlannedSale:
    copies: int
    users: int
    peak_rps: int
    clicks: int = 2  # requests per user: a double click is the rule, not the exception
    opens: datetime | None = None
    success_ms: float | None = None  # the intake's latency for a SUCCESS on AWS, if measured
    other_ms: float | None = None  # for any other answer
    holders: float | None = None  # share of the clicks after the sell-out that come from holders
    cold_preflights: bool = False  # pages that do not warm their preflight before the opening
    waiting: int = 0  # pages that watch the sale (the reference client's watch) ...
    poll_s: float = 1.0  # ... each asking its availability this often at the opening

    @property
    def winners(self) -> int:
        return min(self.copies, self.users)

    @property
    def holder_share(self) -> float:
        """Of the clicks after the sell-out, those of users who hold a copy: given, or each winner's
        later clicks among everyone's."""
        if self.holders is not None:
            return self.holders
        return self.winners * (self.clicks - 1) / max(self.users * self.clicks - self.winners, 1)

    @property
    def asked_before_sell_out(self) -> int:
        """The opening second's requests that run reserve.lua whatever the memory: until the stock
        is gone (every winner's clicks at most: a double click of a winner asks too)."""
        return min(self.peak_rps, self.winners * self.clicks)

    @classmethod
    def parse(cls, text: str) -> PlannedSale:
        """``copies=5000 users=300000 peak=20000/s [clicks=2] [opens=2026-12-01T12:00Z]
        [success_ms=12] [other_ms=3] [holders=0.125] [preflights=warm|cold] [waiting=300000 poll=1s]``"""
        fields: dict[str, str] = {}
        for part in text.split():
            key, sep, value = part.partition("=")
            if not sep or not value:
                raise SaleError(f"{part!r} is not key=value")
            fields[key] = value
        known = {"copies", "users", "peak", "clicks", "opens", "success_ms", "other_ms", "holders", "preflights",
                 "waiting", "poll"}  # fmt: skip
        if unknown := sorted(set(fields) - known):
            raise SaleError(f"unknown {', '.join(unknown)}; known: {', '.join(sorted(known))}")
        if missing := sorted({"copies", "users", "peak"} - set(fields)):
            raise SaleError(f"the sale needs {', '.join(missing)}, as in copies=5000 users=300000 peak=20000/s")
        return cls(
            copies=_count("copies", fields["copies"]),
            users=_count("users", fields["users"]),
            peak_rps=_count("peak", fields["peak"].removesuffix("/s")),
            clicks=_count("clicks", fields.get("clicks", "2")),
            opens=_time(fields["opens"]) if "opens" in fields else None,
            success_ms=_millis("success_ms", fields["success_ms"]) if "success_ms" in fields else None,
            other_ms=_millis("other_ms", fields["other_ms"]) if "other_ms" in fields else None,
            holders=_share("holders", fields["holders"]) if "holders" in fields else None,
            cold_preflights=_warm_or_cold(fields.get("preflights", "warm")),
            waiting=_count("waiting", fields["waiting"]) if "waiting" in fields else 0,
            poll_s=_seconds("poll", fields.get("poll", "1s")),
        )


def _warm_or_cold(text: str) -> bool:
    if text not in ("warm", "cold"):
        raise SaleError(f"preflights={text}: warm (the pages warm them before the opening) or cold")
    return text == "cold"


def _count(key: str, text: str) -> int:
    if not re.fullmatch(r"[1-9][0-9]{0,9}", text.replace("_", "")):
        raise SaleError(f"{key} must be a whole number from 1, got {text!r}")
    return int(text.replace("_", ""))


def _millis(key: str, text: str) -> float:
    if not re.fullmatch(r"[0-9]+(\.[0-9]+)?", text.removesuffix("ms")) or float(text.removesuffix("ms")) <= 0:
        raise SaleError(f"{key} must be milliseconds above 0, got {text!r}")
    return float(text.removesuffix("ms"))


def _seconds(key: str, text: str) -> float:
    if not re.fullmatch(r"[0-9]+(\.[0-9]+)?s?", text) or float(text.removesuffix("s")) <= 0:
        raise SaleError(f"{key} must be seconds above 0, as 1s, got {text!r}")
    return float(text.removesuffix("s"))


def _share(key: str, text: str) -> float:
    if not re.fullmatch(r"(0(\.[0-9]+)?|1(\.0+)?)", text):
        raise SaleError(f"{key} must be a share from 0 to 1, got {text!r}")
    return float(text)


def _time(text: str) -> datetime:
    try:
        opens = datetime.fromisoformat(text)
    except ValueError:
        raise SaleError(f"opens must be an ISO 8601 time in UTC, as 2026-12-01T12:00Z, got {text!r}") from None
    if opens.utcoffset() != timedelta(0):
        raise SaleError(f"opens must be in UTC (Z), got {text!r}")
    return opens.astimezone(UTC)


@dataclass(frozen=True)
class Limit:
    name: str
    value: float
    demand: float
    unit: str
    source: str
    action: str  # what to do when it binds

    @property
    def headroom(self) -> float:
        return math.inf if self.demand <= 0 else self.value / self.demand


@dataclass(frozen=True)
class SlotSecond:
    """One second of the coupon's slot, in ECPU/s: without the memory of refusals and with it,
    and of the latter, the containers' refreshes and their reads of the holders' filter."""

    second: str
    without_memory: float
    with_memory: float
    refreshes: float  # ECPU/s of the memory's own reserves: one a second per container
    filter_reads: float  # ECPU of the containers' reads of the holders' filter


@dataclass(frozen=True)
class Polling:
    """What the waiting pages' polls cost at the opening, per second: at the edge (CloudFront),
    and what reaches API Gateway, the coupons function and Redis with the edge and without it."""

    at_edge: float  # requests/s the pages send
    through_edge: float  # requests/s past the edge, one a cache period per coupon: each a Redis read at most
    usd_per_minute: float  # CloudFront's bill for a minute of it


@dataclass(frozen=True)
class Plan:
    limits: list[Limit]
    concurrency: int  # intake environments the peak keeps busy
    warmup: int  # provisioned concurrency to schedule, 0 for none (cdk.json's own is in the limits)
    warmup_lead_min: int  # how long before the opening the warmup must start
    drain_s: float  # how long the workers take to persist every winner
    notes: list[str] = field(default_factory=list)
    slot: list[SlotSecond] = field(default_factory=list)  # one coupon's slot, second by second
    polling: Polling | None = None  # the waiting pages', when the sale has any

    @property
    def binding(self) -> Limit:
        return min(self.limits, key=lambda limit: limit.headroom)

    @property
    def fits(self) -> bool:
        return self.binding.headroom >= 1


def plan(
    config: EnvironmentConfig, sale: PlannedSale, quotas: dict[str, Quota] = QUOTAS, measured: Measured = MEASURED
) -> Plan:
    """The sale's plan on environment ``config`` (an AWS one: dev, small, prod or your own)."""
    if not isinstance(config, AwsEnvironment):
        raise SaleError(f"{config.name} is not an AWS environment: make plan needs its concurrency, kafka and cache")
    if config.processing_limit is None:
        raise SaleError(f"{config.name} has no processingLimit: make plan times the workers' writes by it")
    q = {key: quota.value for key, quota in quotas.items()}
    winners = sale.winners
    successes_first_second = min(winners, sale.peak_rps)
    scale = max(1.0, ONE_VCPU_MB / config.intake_memory_mb)  # below one vCPU, CPU time stretches
    waits = config.cache.wait_replicas > 0
    success_ms = sale.success_ms or (
        measured.intake_cpu_ms["SUCCESS"] * scale
        + measured.redis_rtt_ms
        + measured.produce_ack_ms
        + (measured.replica_wait_ms if waits else 0.0)
    )
    other_ms = sale.other_ms or measured.intake_cpu_ms["SOLD_OUT"] * scale + measured.redis_rtt_ms
    remembered_ms = measured.intake_cpu_ms["SOLD_OUT"] * scale * measured.remembered_share  # no round trip
    asked = sale.asked_before_sell_out
    rest = sale.peak_rps - asked
    forwarded = asked - successes_first_second + rest * _forwarded_share(sale, measured)
    remembered = sale.peak_rps - successes_first_second - forwarded
    busy_s = (successes_first_second * success_ms + forwarded * other_ms + remembered * remembered_ms) / 1000
    concurrency = math.ceil(busy_s)  # Little's law over the opening second
    reserved = config.concurrency.intake
    rate_needs = math.ceil(sale.peak_rps / q["lambda_rps_per_concurrency"])  # the reserved concurrency it needs
    used = min(concurrency, reserved)
    kafka = config.kafka
    serverless_kafka = kafka.kind == "serverless"
    # all of a coupon's records share its key, so its partition: one leader broker takes every produce
    rate_key = (
        "msk_serverless_connection_rate" if serverless_kafka
        else "msk_t3_connection_rate" if kafka.broker_instance_type.startswith("kafka.t3.")
        else "msk_connection_rate"
    )  # fmt: skip
    cold_opening_fits = concurrency * INIT_CONNECTION_ATTEMPTS <= q[rate_key] and concurrency <= q["lambda_scale_out"]
    warmup = 0 if cold_opening_fits else min(reserved, math.ceil(concurrency * 1.2))
    configured = config.concurrency.warmup.provisioned if config.concurrency.warmup else 0
    cold_first_second = min(max(used - configured, 0), q["lambda_scale_out"])
    reserved_total = reserved_concurrency(config)
    ratio = successes_first_second / sale.peak_rps  # of the opening second's answers, SUCCESS
    reserve_usec = _mixed(measured.reserve_usec, ratio) + (ratio * measured.wait_usec if waits else 0.0)
    api = config.api
    cold = preflights(config, sale) if sale.cold_preflights else 0
    gateway_rps = sale.peak_rps + cold  # API Gateway counts a preflight as a request
    limits = [
        _quota(quotas["api_rps"], gateway_rps, "request a higher 'Throttle rate' (Service Quotas, API Gateway)"),
        Limit("the stage throttle (cdk.json api.rateLimit), preflights included", api.rate_limit, gateway_rps,
              "requests/s", "cdk.json", "raise api.rateLimit (at most the account's throttle) and deploy, or "
              "warm the preflights before the opening (docs/deploy.md, Preflights)"),
        Limit("requests/s that the intake's reserved concurrency allows (10 x concurrency.intake)",
              q["lambda_rps_per_concurrency"] * reserved, sale.peak_rps, "requests/s",
              quotas["lambda_rps_per_concurrency"].source, f"raise concurrency.intake to {rate_needs:,}"),
        Limit("the intake's reserved concurrency (cdk.json concurrency.intake)", reserved, concurrency,
              "environments", "cdk.json", "raise concurrency.intake (and the account's concurrency with it)"),
        _quota(quotas["lambda_concurrency"], reserved_total + q["lambda_unreserved"],
               "request a higher 'Concurrent executions' (Service Quotas, Lambda) before cdk deploy: "
               "the reserved concurrency of every function plus what Lambda keeps unreserved"),
        Limit("Lambda scale-out in the first 10 s (1,000 environments per function)", q["lambda_scale_out"],
              max(concurrency - configured, 0), "environments", quotas["lambda_scale_out"].source,
              "schedule provisioned concurrency (concurrency.warmup)"),
        Limit("IAM connections one broker holds if every intake environment the rate needs runs "
              "(coupon_cdk.config's budget)", iam_connections_taken(config),
              iam_connections(config, intake=max(reserved, rate_needs)), "connections",
              quotas["msk_connections"].source,
              "a broker's IAM connections bound the intake's reserved concurrency, so its rate: past it, "
              "the intake needs a way in without IAM's cap (docs/deploy.md, Sizing)"),
        Limit(f"{quotas[rate_key].what} in the opening second", q[rate_key],
              cold_first_second * INIT_CONNECTION_ATTEMPTS, "connections/s", quotas[rate_key].source,
              "schedule provisioned concurrency, so that the INITs connect before the sale"),
    ]  # fmt: skip
    slot = slot_seconds(sale, concurrency, measured)
    limits.append(_slot(config, sale.peak_rps, quotas, slot, reserve_usec))
    polling = polls(config, sale)
    if polling is not None:
        limits.append(
            Limit("requests/s that the coupons function's reserved concurrency allows (10 x "
                  "concurrency.coupons), the waiting pages' polls past the edge",
                  q["lambda_rps_per_concurrency"] * config.concurrency.coupons, polling.through_edge,
                  "requests/s", quotas["lambda_rps_per_concurrency"].source, "raise concurrency.coupons")
        )  # fmt: skip
    if serverless_kafka:
        spread = "spread the sale over several seconds (a lower stage throttle) or use provisioned MSK"
        limits.append(_quota(quotas["msk_serverless_requests"], successes_first_second, spread))
    lead_s = 60 * q["lambda_provisioning_prep_min"] + 60 * warmup / q["lambda_provisioning"]
    lead_s += warmup * INIT_CONNECTION_ATTEMPTS / q[rate_key]  # the INITs' connections, at the broker's rate
    notes = _notes(
        config, sale, winners, quotas, max(second.with_memory for second in slot), measured=measured, polling=polling
    )
    return Plan(
        limits=limits,
        concurrency=concurrency,
        warmup=warmup,
        warmup_lead_min=0 if not warmup else max(15, 5 * math.ceil(lead_s / 300)),
        drain_s=winners / config.processing_limit.writes_per_second,
        notes=notes,
        slot=slot,
        polling=polling,
    )


def polls(config: EnvironmentConfig, sale: PlannedSale) -> Polling | None:
    """The waiting pages' polls at the opening (``waiting`` pages, one each ``poll_s``): all of
    them at the edge, which lets through one per cache period (the availability's: the cache key
    is the coupon's path alone); each reaching the coupons function costs at most one Redis read
    per container and period (availability.AVAILABILITY_MS), so at most one per request. The
    edge bills each poll as a request, its function's run and the answer's bytes out."""
    if not sale.waiting:
        return None
    at_edge = sale.waiting / sale.poll_s
    through = min(at_edge, 1000 / AVAILABILITY_MS)
    per_poll = (
        PRICES["cloudfront_https_10k"].usd / 10_000
        + PRICES["cloudfront_function_million"].usd / 1_000_000
        + PRICES["cloudfront_out_gb"].usd * AVAILABILITY_ANSWER_BYTES / 1e9
    )
    usd = at_edge * 60 * per_poll
    return Polling(at_edge, through, usd)


def preflights(config: EnvironmentConfig, sale: PlannedSale) -> int:
    """The browsers' preflights in the opening second, where pages call the API (``api.corsOrigins``):
    one per user's first click, at most, from a page that did not warm it before (a browser keeps a
    preflight's answer for its Max-Age, two hours in Chromium, and every later click uses it)."""
    return math.ceil(sale.peak_rps / sale.clicks) if config.api.cors_origins else 0


def _forwarded_share(sale: PlannedSale, measured: Measured) -> float:
    """Of the requests after the sell-out, those the memory sends to Redis: holders' and false positives'."""
    return min(1.0, sale.holder_share + measured.false_positives)


def slot_seconds(sale: PlannedSale, containers: int, measured: Measured) -> list[SlotSecond]:
    """The coupon's slot in the opening second and in each second after the sell-out, in ECPU/s.

    Without the memory every request runs reserve.lua. With it, every request still does until
    the stock is gone (``PlannedSale.asked_before_sell_out``); then each container learns
    SOLD_OUT with one reserve and reads the holders' filter once (a simple GET: one ECPU a KB),
    and after that only holders' clicks, false positives and one refresh a second per container
    reach the slot. A holder's clicks reach it once a second in each container that answered one
    of them; counted here as all reaching it (a bound: with a fleet of containers, a holder's next
    click seldom lands where its last one did).
    """
    ecpu = measured.reserve_ecpu
    rate = sale.peak_rps
    taken = min(sale.winners, rate)  # copies taken in the opening second
    asked = sale.asked_before_sell_out
    holders = sale.holder_share
    forwarded = _forwarded_share(sale, measured)
    refreshes = containers / measured.memory_s * ecpu["SOLD_OUT"]
    sold_out = asked < rate  # within the opening second: each container learns it, and reads the filter
    opening_refreshes = refreshes if sold_out else 0.0
    filter_reads = containers * max(1.0, size_bits(sale.copies) / 8 / 1024) if sold_out else 0.0
    after_sell_out = holders * ecpu["DUPLICATE"] + (1 - holders) * ecpu["SOLD_OUT"]
    opening_without = taken * ecpu["SUCCESS"] + (rate - taken) * after_sell_out
    opening_with = (
        taken * ecpu["SUCCESS"]
        + (asked - taken) * after_sell_out
        + (rate - asked) * forwarded * ecpu["DUPLICATE"]
        + opening_refreshes
        + filter_reads
    )
    later_with = rate * forwarded * ecpu["DUPLICATE"] + refreshes
    return [
        SlotSecond("the opening second", opening_without, opening_with, opening_refreshes, filter_reads),
        SlotSecond("each second after the sell-out", rate * after_sell_out, later_with, refreshes, 0.0),
    ]


def reserved_concurrency(config: AwsEnvironment) -> int:
    """What the environment's functions reserve of the account's concurrency (stack.py sets it:
    the intake's, the coupons function's and the DLQ handler's from cdk.json, the worker one per
    partition, the builder's, the rebuild's and the relay's from coupon_cdk.config); an infra test
    holds it to the synthesized template."""
    sizing = config.concurrency
    fixed = BUILDER_CONCURRENCY + REBUILD_CONCURRENCY + RELAY_CONCURRENCY
    return sizing.intake + sizing.coupons + config.kafka.partitions + sizing.dlq_handler + fixed


def _mixed(per_answer: dict[str, float], successes: float) -> float:
    """A figure over the opening second's answers: ``successes`` of them SUCCESS, the rest SOLD_OUT."""
    return successes * per_answer["SUCCESS"] + (1 - successes) * per_answer["SOLD_OUT"]


def _slot(
    config: AwsEnvironment, peak_rps: int, quotas: dict[str, Quota], slot: list[SlotSecond], reserve_usec: float
) -> Limit:
    """One coupon's slot: every key of a coupon carries its id as a hash tag, so one coupon is one
    slot, served by one engine thread however large the cache. Its busiest second counts, the
    memory of refusals included (:func:`slot_seconds`); on a node-based cache, the requests that
    reach the shard in it."""
    split = "split the stock over several coupons (each its own slot and, in cluster mode, shard)"
    busiest = max(second.with_memory for second in slot)
    if config.cache.kind == "serverless":
        return _quota(quotas["cache_slot_ecpu"], busiest, split)
    ceiling = 1_000_000 / reserve_usec
    source = "docs/benchmarks.md (python -m bench.reserve ceiling)"
    reaching = peak_rps * busiest / max(second.without_memory for second in slot)
    return Limit("one coupon's shard (one Valkey engine thread)", ceiling, reaching, "requests/s", source, split)


def _quota(quota: Quota, demand: float, action: str) -> Limit:
    return Limit(quota.what, quota.value, demand, quota.unit, quota.source, action)


def _notes(
    config: AwsEnvironment,
    sale: PlannedSale,
    winners: int,
    quotas: dict[str, Quota],
    slot_ecpu: float,
    *,
    measured: Measured,
    polling: Polling | None,
) -> list[str]:
    cache = config.cache
    notes = [f"{sale.users * sale.clicks:,} requests in all ({sale.clicks} per user); {winners:,} winners"]
    if cache.wait_replicas:
        notes.append(
            f"a SUCCESS waits until {cache.wait_replicas} of the cache's {cache.replicas} replicas have its "
            f"reservation (cache.waitReplicas, WAIT): about {measured.replica_wait_ms:g} ms more per SUCCESS, "
            f"counted in the intake's concurrency above, and {measured.wait_usec:g} µs of the coupon's engine "
            "thread, counted in its shard (python -m bench.reserve wait); a failover then loses an answered copy "
            "only by promoting the replica that lacks it"
        )
    if polling is not None:
        gateway = sale.peak_rps + polling.at_edge
        notes.append(
            f"{sale.waiting:,} waiting pages polling every {sale.poll_s:g} s: {polling.at_edge:,.0f} requests/s at "
            f"the edge (CloudFront: ${polling.usd_per_minute:,.2f} a minute; the reference client polls every 10 s "
            f"until the last minute), of which {polling.through_edge:,.0f}/s reach API Gateway, the coupons function "
            f"and at most {polling.through_edge:,.0f} Redis read/s; without the edge every poll would: "
            f"{gateway:,.0f} requests/s at the stage with the claims (its throttle: {config.api.rate_limit:,})"
        )
    if cold := preflights(config, sale):
        counted = "counted above (preflights=cold)" if sale.cold_preflights else "not counted above (preflights=warm)"
        notes.append(
            f"{cold:,} preflights (OPTIONS) in the opening second at most, one per user's first click from a page "
            "that did not warm it, which API Gateway counts against its throttles and the web ACL sees: "
            f"{counted}; a page warms its preflight when it loads (the reference client's warmUp), before the "
            "opening (docs/deploy.md, Preflights)"
        )
    if cache.kind == "serverless":
        minimum = math.ceil(min(slot_ecpu, quotas["cache_slot_ecpu"].value))
        notes.append(
            f"the serverless cache takes up to {quotas['cache_doubling_min'].value:.0f} minutes to double its "
            f"request rate: set its ECPU/s minimum to {minimum:,} before the sale (CacheUsageLimits.ECPUPerSecond)"
        )
    return notes


def warmup_snippet(result: Plan, sale: PlannedSale) -> str | None:
    """The ``concurrency.warmup`` block for cdk.json, when the sale has an opening time."""
    if not result.warmup or sale.opens is None:
        return None
    starts = sale.opens - timedelta(minutes=result.warmup_lead_min)
    ends = sale.opens + timedelta(hours=1)
    return (
        f'"warmup": {{"starts": "at({starts:%Y-%m-%dT%H:%M:%S})", "ends": "at({ends:%Y-%m-%dT%H:%M:%S})", '
        f'"provisioned": {result.warmup}}}'
    )
