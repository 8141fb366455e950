"""The domain: issuing, persisting, recording failures, reconciling and answering status.

Free of Lambda types and of drivers: it talks to Redis, PostgreSQL, Kafka and SQS only through
protocols (ports), which the adapters implement: those several jobs share in
:mod:`coupon_core.domain.ports`, each job's own in its module.

    reservations.py   the values of the reservation store: IssueOutcome (the one outcome), a coupon's state, ...
    coupons.py        coupons and issued users as plain values, and the rules of a change
    records.py        the ids' and times' limits and conversions, and the Kafka record of an accepted request
    ids.py            ids and times checked where no HTTP model checked them
    delivery.py       a record as read back: its position, its decoded message
    in_flight.py      what a run of records holds in flight: accepted, not yet persisted
    dead_letters.py   the DLQ's messages: rejection letters and on-failure letters
    ports.py          what the jobs behind the intake share of the outside, as protocols
    ledger.py         the database's writes of the worker and the DLQ handler, as protocols
    issuing.py        the intake: reserve, publish, release if the publish fails
    persisting.py     the worker: a batch, grouped by coupon, one transaction per coupon
    failures.py       the DLQ handler: release the reservation, record the failure
    reconcile.py      the rebuild function: Redis made to agree with the database and Kafka, in runs
                      and for a state reserve found missing
    state_sync.py     Redis brought to a change the database already holds
    status.py         where a user's request stands
    availability.py   a sale as a shop's page reads it, once a second per coupon and container
    lifecycle.py      an issued copy used once, canceled, or expired
    operations.py     what operators do to a coupon
    outbox_relay.py   the coupon event stream and the relay that publishes the outbox
"""
