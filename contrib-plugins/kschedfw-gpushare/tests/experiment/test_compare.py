"""The side-by-side table: tolerance (2 sd of the paper, at least 0.3) and the policy order."""

import io

from kschedfw_gpushare.experiment import compare

LABELS = ["01-Random", "02-DotProd", "03-GpuClustering", "04-GpuPacking", "05-BestFit", "06-FGD"]


def table(means, workload="openb_pod_list_default", jitter=(0.0, 0.0)):
    lines = ["workload,sc_policy,tune,seed,100,130\n"]
    for label, mean in zip(LABELS, means):
        for seed, d in zip((42, 43), jitter):
            lines.append(f"{workload},{label},1.3,{seed},{mean + d},{mean + d + 0.2}\n")
    return compare.read_allocation(lines)


def test_paper_fixture_has_ten_seeds_of_default_and_cpu050():
    paper = compare.paper_allocation()
    assert len(paper) == 12
    fgd = compare.Stat.of(paper[("openb_pod_list_default", "06-FGD")]["100"])
    assert (round(fgd.mean, 2), round(fgd.sd, 2), fgd.n) == (95.23, 0.11, 10)
    assert round(compare.Stat.of(paper[("openb_pod_list_cpu050", "01-Random")]["130"]).mean, 2) == 91.24


def test_within_tolerance_and_order():
    paper = table([86.3, 90.6, 91.6, 91.8, 92.9, 95.2], jitter=(-0.05, 0.05))
    out = io.StringIO()
    assert compare.compare(table([86.5, 90.5, 91.7, 91.6, 92.8, 95.0]), paper, out)
    assert "order at 100% holds" in out.getvalue()
    out = io.StringIO()
    assert not compare.compare(table([86.3, 90.6, 91.6, 91.8, 92.9, 94.8]), paper, out)  # 0.4 off, sd 0.07
    assert "NO" in out.getvalue()


def test_order_needs_fgd_first_and_random_last():
    assert compare.order_holds(dict(zip(LABELS, [86.3, 90.6, 91.8, 91.6, 92.9, 95.2])))
    assert not compare.order_holds(dict(zip(LABELS, [86.3, 90.6, 91.8, 91.6, 95.3, 95.2])))
    assert not compare.order_holds(dict(zip(LABELS, [86.3, 91.7, 91.8, 91.6, 92.9, 95.2])))
