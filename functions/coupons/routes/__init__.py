"""The coupons function's routes, one router per resource, and their helpers.

availability.py a sale's state, window and copies left (public, cached)
issues.py       a request's status (public)
lifecycle.py    using and canceling an issued copy (public)
coupons.py      creating and reading a coupon (admin)
operations.py   pages, export, changes, close and reopen, top-up, reconcile (admin)
responses.py    an Answer as Powertools' Response
"""
