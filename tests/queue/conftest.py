import pytest


@pytest.fixture(params=[False, True], ids=["less", "sort_key"])
def sort_key(request):
    """Run queue tests with both heap implementations: the QueueSort ``less`` comparator and
    the optional C-speed ``sort_key``."""
    return request.param
