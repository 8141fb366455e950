"""Kafka (MSK) clients.

connection.py        the connection settings every client shares (TLS, SASL, timeouts), and MSK IAM
                     auth tokens, signed with credentials resolved once
publisher.py         accepted requests published, the broker's acknowledgement awaited (and the
                     private parts of kafka-python it reads, pinned)
event_publisher.py   the coupon event stream, a batch of outbox events at a time
in_flight.py         the records after the worker group's committed offsets
range_reader.py      a range of records read back by offset (the mapping's on-failure records)
topics.py            the topics, made through the Kafka admin protocol
brokers.py           the brokers' IAM connection limit, set through the Kafka admin protocol
"""
