"""What the two HTTP functions (``functions/intake``, ``functions/coupons``) share: one answer
format, one table of refusals, one reading of the caller and of the media type, one set of bodies.

answers.py          an Answer, the one table of refusals, and the answer to what a route raises
request.py          what both read of an event first: the rule that bodies are JSON, who is asking,
                    the page's CORS headers; and the intake's issue request, its one model
                    (pydantic), read and validated, or refused (422, 404)
schemas.py          the other request and response bodies (pydantic)
parameters.py       the path, query and header parameters of the routes (Powertools' OpenAPI)
openapi_answers.py  the OpenAPI descriptions of a route's answers
"""
