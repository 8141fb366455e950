"""What a person runs against the system.

- ``demo``: ``make demo``, a flash sale through the local stack's API, with the I1-I5 report.
- ``chaos``: ``make chaos``, a flash sale in-process under random faults.
- ``smoke``: a smoke test of a deployed environment through its API.
- ``plan``: ``make plan``, the AWS limits a sale meets on an environment, and what to do.
- ``bill``: ``make bill``, what each AWS environment costs a month at idle, into docs/deploy.md.
- ``rehearse``: ``make rehearse``, a flash sale driven by locust on a running environment.
- ``rehearsal_target``: where a rehearsal may go and how big it may be, checked before it starts.
- ``outside_audit``: I1-I5 audited through the API alone (the rehearsal's).
- ``openapi``: ``make openapi``, the document generated from the intake routes.
- ``sale_report``: the HTML page with a sale's charts (the demo's, chaos's, the rehearsal's).
- ``invariants``: I1-I4 checked against PostgreSQL and Redis (the demo, chaos and integration tests).
- ``handler_probe``: the intake handler in-process, beside the demo's end-to-end latency.
- ``openings``: the demo's two openings side by side, on cold and on warmed intake environments.
- ``mutate``: ``make mutate``, mutation testing of the clients' decisions.
"""
