"""What the topic custom resource does to a topic it finds (the broker calls are in tests/services)."""

import pytest

from coupon_core.adapters.kafka.topics import TopicChange, TopicSpec, plan
from coupon_core.backend_errors import TopicShrinkError

SPEC = TopicSpec("coupon.issue.v1", 6, 3)


@pytest.mark.parametrize(
    ("existing", "change"),
    [(None, TopicChange.CREATED), (2, TopicChange.GROWN), (6, TopicChange.UNCHANGED)],
)
def test_a_missing_topic_is_created_a_smaller_one_grown_an_equal_one_left(existing, change):
    assert plan(SPEC, existing) is change


def test_a_larger_topic_is_refused_not_shrunk():
    with pytest.raises(TopicShrinkError, match="has 12 partitions; asked for 6"):
        plan(SPEC, 12)
