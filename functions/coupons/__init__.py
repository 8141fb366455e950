"""The coupons function: every route of the HTTP API but ``POST /coupon-issues`` (app.py is the
handler), on stock Powertools.

app.py              the handler: the media type, then Powertools' REST resolver with every route
routes/             the routes, one router per resource
error_handlers.py   the one place the resolver's error handlers are registered
dependencies.py     the collaborators, built once per container and given to routes with Depends
"""
