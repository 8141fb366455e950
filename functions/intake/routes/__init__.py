"""The resolver's routes, one router per resource, and their helpers.

issues.py       POST /coupon-issues and a request's status (public)
lifecycle.py    using and canceling an issued copy (public)
coupons.py      creating and reading a coupon (admin)
operations.py   pages, export, changes, close and reopen, top-up, reconcile (admin)
asker.py        the caller of the current request, as a Depends parameter
responses.py    an Answer as Powertools' Response, and the OpenAPI descriptions of answers
"""
