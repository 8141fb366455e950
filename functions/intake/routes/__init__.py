"""The intake's routes, one router per resource: ``issues`` (public) and ``coupons`` (admin)."""
