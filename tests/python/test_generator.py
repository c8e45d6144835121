"""fastt.Generator (torch.Generator): an independent, seedable stream for
every random op's generator= argument, with state save/restore, pickling,
fastt.default_generator, and the data utilities that take one."""
import pickle

import pytest
import torch

import fastt
import fastt.utils.data as D

DRAWS = [
    ("rand", lambda g: fastt.rand(5, generator=g)),
    ("randn", lambda g: fastt.randn(2, 3, generator=g)),
    ("randint", lambda g: fastt.randint(0, 100, (6,), generator=g)),
    ("randperm", lambda g: fastt.randperm(10, generator=g)),
    ("rand_like", lambda g: fastt.rand_like(fastt.ones(4), generator=g)),
    ("randn_like", lambda g: fastt.randn_like(fastt.ones(4), generator=g)),
    ("normal_", lambda g: fastt.empty(4).normal_(generator=g)),
    ("uniform_", lambda g: fastt.empty(4).uniform_(-1, 1, generator=g)),
    ("bernoulli", lambda g: fastt.bernoulli(fastt.full((8,), 0.5),
                                            generator=g)),
    ("multinomial", lambda g: fastt.multinomial(fastt.ones(6), 3,
                                                generator=g)),
    ("poisson", lambda g: fastt.poisson(fastt.full((4,), 3.0), generator=g)),
    ("exponential_", lambda g: fastt.empty(3).exponential_(generator=g)),
    ("normal", lambda g: fastt.normal(0.0, 1.0, (3,), generator=g)),
]


@pytest.mark.parametrize("name,draw", DRAWS, ids=[n for n, _ in DRAWS])
def test_same_seed_same_draws_and_global_stream_untouched(name, draw):
    fastt.manual_seed(123)
    expect_global = fastt.rand(3)
    fastt.manual_seed(123)
    a = draw(fastt.Generator().manual_seed(7))
    b = draw(fastt.Generator().manual_seed(7))
    c = draw(fastt.Generator().manual_seed(8))
    assert bool((a == b).all())
    assert a.numel() < 4 or not bool((a == c).all())
    # drawing from a generator leaves the default stream where it was
    assert bool((fastt.rand(3) == expect_global).all())


def test_state_round_trip_pickle_and_default_generator():
    g = fastt.Generator().manual_seed(5)
    assert g.initial_seed() == 5 and g.device == fastt.device("cpu")
    fastt.rand(3, generator=g)
    state = g.get_state()
    assert state.dtype == fastt.uint8 and state.numel() == 16
    a = fastt.randn(4, generator=g)
    g.set_state(state)
    assert bool((fastt.randn(4, generator=g) == a).all())
    g.set_state(state)
    h = pickle.loads(pickle.dumps(g))
    assert bool((fastt.randn(4, generator=h) == a).all())
    fastt.manual_seed(11)
    assert fastt.default_generator.initial_seed() == 11
    s = fastt.default_generator.get_state()
    x = fastt.rand(2)
    fastt.default_generator.set_state(s)
    assert bool((fastt.rand(2) == x).all())
    assert isinstance(g.seed(), int)


def test_errors_like_torch():
    for L in (fastt, torch):
        with pytest.raises(TypeError, match="generator"):
            L.rand(2, generator=3)
        with pytest.raises((TypeError, RuntimeError)):
            L.Generator().set_state(L.zeros(16))  # not uint8
    with pytest.raises(RuntimeError, match="expected a generator state of 16 "
                                           "bytes"):
        fastt.Generator().set_state(fastt.zeros(3, dtype=fastt.uint8))


def test_data_utilities_take_a_generator():
    def split(seed):
        g = fastt.Generator().manual_seed(seed)
        return [list(s) for s in D.random_split(range(20), [0.5, 0.5],
                                                generator=g)]
    assert split(42) == split(42) and split(42) != split(43)

    def order(seed):
        ds = D.TensorDataset(fastt.arange(16))
        g = fastt.Generator().manual_seed(seed)
        return [b[0].tolist() for b in D.DataLoader(ds, batch_size=4,
                                                    shuffle=True,
                                                    generator=g)]
    assert order(1) == order(1) and order(1) != order(2)
    sampler = D.RandomSampler(range(10),
                              generator=fastt.Generator().manual_seed(0))
    assert sorted(sampler) == list(range(10))
