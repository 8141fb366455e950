"""The intake function: ``POST /coupon-issues``, the one route of a flash sale (app.py is the handler).

app.py              the handler: media type, request (``http_api/request.py``), caller, the domain's
                    outcome mapped to its answer, its metrics and log; Logger's context
dependencies.py     the settings, Redis, the Kafka producer and the service, built once per container
openapi.py          the route as OpenAPI describes it (for docs/openapi.json; never served)
"""
