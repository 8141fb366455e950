"""The intake function: the HTTP API of docs/design.md (app.py is the handler).

app.py              the handler: a body that is not JSON refused, then the express lane, else the resolver
json_only.py        the rule that bodies are JSON, for both lanes
express.py          a well-formed POST /coupon-issues, answered without the resolver
issue_route.py      what that route does once its request is valid, for both lanes
issue_metrics.py    an issue answer's metrics: one EMF line, its constant part built once
api.py              Powertools' REST resolver with every route
routes/             the resolver's routes, one router per resource
schemas.py          request and response models
answers.py          what the intake sends back, and the one table of refusals
error_handlers.py   the one place the resolver's error handlers are registered
caller.py           who is asking (the body's user id, or the token's)
dependencies.py     the hot path's collaborators, built once per container, connections opened in INIT
route_dependencies.py  the collaborators only the resolver's routes use, imported with it
"""
