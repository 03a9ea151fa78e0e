"""The authors' merge rule on hand-made event lists."""

from kschedfw_gpushare.experiment import metric


def test_events_count_failed_pods_as_arrived_but_not_allocated():
    assert metric.allocation_events([500, 1000, 0, 2000], [True, False, True, True]) == [
        (500, 500), (500, 1500), (500, 1500), (2500, 3500)]


def test_arrived_percent_rounds_half_to_even():
    # with 1 GPU (1000 milli) capacity: A = 5 milli is 0.5% -> bucket 0; 15 -> 1.5% -> 2; 25 -> 2.5% -> 2
    cols = metric.discrete_allocation([(5, 5), (15, 15), (25, 25)], total_gpus=1)
    assert cols[0] == 0.5
    assert cols[2] == 2.0  # mean of 1.5 and 2.5
    assert cols[1] == 1.5  # no event in bucket 1: the window 0..2 holds 0.5, 1.5, 2.5


def test_empty_bucket_falls_back_to_its_neighbours_or_is_omitted():
    events = [(0, 0), (30, 30), (40, 40)]  # buckets 0, 3, 4 of a 1-GPU cluster
    cols = metric.discrete_allocation(events, total_gpus=1)
    assert cols[1] == 0.0  # window 0..2 holds bucket 0 only
    assert cols[2] == 3.0  # window 1..3 holds bucket 3 only
    assert cols[5] == 4.0  # window 4..6
    assert 6 not in cols and 130 not in cols


def test_allocation_percent_is_rounded_per_event_then_averaged():
    # 6212 GPUs: U=1 milli is 0.0000161% -> 0.0 per event, whatever the mean would have been
    cols = metric.discrete_allocation([(1, 0), (1, 0)], total_gpus=6212)
    assert cols[0] == 0.0
    # 12345 milli of 6212 GPUs = 0.19873...% -> 0.2
    assert metric.discrete_allocation([(12345, 0)], total_gpus=6212)[0] == 0.2


def test_mean_uses_pairwise_summation_like_numpy():
    values = [0.1] * 10 + [1e16] + [-1e16] + [0.1] * 200
    naive = 0.0
    for v in values:
        naive += v
    assert metric._pairwise_sum(values, 0, len(values)) != naive  # the order of additions matters
    # by hand: 212 values split 104 + 108; each half sums in 8 lanes (the tail sequentially)
    lanes = [0.0] * 8
    for i, v in enumerate(values[:104]):
        lanes[i % 8] = v if i < 8 else lanes[i % 8] + v
    left = ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) + ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]))
    rest = values[104:]
    lanes = list(rest[:8])
    for i in range(8, 104):
        lanes[i % 8] += rest[i]
    right = ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) + ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]))
    for v in rest[104:]:
        right += v
    assert metric._pairwise_sum(values, 0, len(values)) == left + right


def test_column_mean_is_rounded_like_numpy_not_like_decimal():
    # 1.005 is 1.00499999999999989...: Python's round(1.005, 2) gives 1.0, numpy's scaled
    # rounding 100.49999999999999 -> 100 gives 1.0 too; 0.125*100 = 12.5 -> half-to-even 12
    assert metric._numpy_round2(0.125) == 0.12
    assert metric._numpy_round2(0.135) == 0.14
    assert metric._numpy_round2(1.0049999999999999) == 1.0


def test_row_has_the_papers_header_and_formatting():
    cols = {k: float(k) for k in metric.BUCKETS}
    cols[100] = 95.29
    row = metric.csv_row("default", "06-FGD", 42, 6212, cols)
    assert metric.HEADER[:6] == ("workload", "sc_policy", "tune", "seed", "total_gpus", "0")
    assert metric.HEADER[-1] == "130" and len(metric.HEADER) == 136
    assert row[:7] == ["openb_pod_list_default", "06-FGD", "1.3", "42", "6212", "0.0", "1.0"]
    assert row[metric.HEADER.index("100")] == "95.29"
    del cols[7]
    assert metric.csv_row("default", "06-FGD", 42, 6212, cols)[metric.HEADER.index("7")] == ""
