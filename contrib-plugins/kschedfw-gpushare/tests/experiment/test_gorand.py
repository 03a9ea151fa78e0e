"""Go math/rand vectors: the Int63 stream for Seed(1) as Go prints it, the well-known Intn(100)
sequence, a Shuffle vector from an independent port, and Perm/Shuffle checked against their
definitions over the same stream."""

from kschedfw_gpushare.experiment.gorand import GoRand


def test_seed_1_int_stream_is_gos():
    r = GoRand(1)
    assert [r.int_() for _ in range(5)] == [5577006791947779410, 8674665223082153551, 6129484611666145821,
                                          4037200794235010051, 3916589616287113937]


def test_seed_1_intn_100_is_the_go_playground_sequence():
    r = GoRand(1)
    assert [r.intn(100) for _ in range(10)] == [81, 87, 47, 59, 81, 18, 25, 40, 56, 0]


def test_seed_is_taken_modulo_2_31_minus_1_and_zero_is_replaced():
    assert GoRand(0).int63() == GoRand(2147483647).int63()
    assert GoRand(-5).int63() == GoRand(2147483647 - 5).int63()
    assert GoRand(2).int63() != GoRand(1).int63()


def test_reseeding_restarts_the_stream():
    r = GoRand(42)
    first = [r.int63() for _ in range(700)]  # past one turn of the 607-word register
    r.seed(42)
    assert [r.int63() for _ in range(700)] == first


def test_shuffle_of_ten_with_seed_1():
    assert GoRand(1).shuffled(list(range(10))) == [1, 7, 4, 0, 9, 2, 3, 5, 8, 6]


def test_shuffle_uses_lemire_multiply_shift_on_uint32():
    swaps = []
    GoRand(7).shuffle(50, lambda i, j: swaps.append((i, j)))
    r = GoRand(7)
    expected = []
    for i in range(49, 0, -1):
        n = i + 1
        prod = r.uint32() * n
        while (prod & 0xFFFFFFFF) < ((1 << 32) - n) % n:  # rejection (rare at these n)
            prod = r.uint32() * n
        expected.append((i, prod >> 32))
    assert swaps == expected


def test_perm_is_inside_out_fisher_yates_over_intn_including_the_first_draw():
    r = GoRand(3)
    js = [r.intn(i + 1) for i in range(20)]
    m = [0] * 20
    for i, j in enumerate(js):
        m[i], m[j] = m[j], i
    assert GoRand(3).perm(20) == m
    assert sorted(m) == list(range(20))


def test_intn_rejects_the_top_of_the_range_for_non_powers_of_two():
    r = GoRand(11)
    n = 1_500_000_000  # top = 2**31-1 - 2**31 % n rejects about 30% of Int31 draws
    values = [r.intn(n) for _ in range(200)]
    r = GoRand(11)
    expected = []
    top = (1 << 31) - 1 - (1 << 31) % n
    for _ in range(200):
        v = r.int31()
        while v > top:
            v = r.int31()
        expected.append(v % n)
    assert values == expected
    r = GoRand(11)
    assert [GoRand(11).intn(64)] == [r.int31() & 63]  # powers of two mask
