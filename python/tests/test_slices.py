# SPDX-License-Identifier: Apache-2.0
"""get_slice against numpy's own slicing, property-style: random shapes, dtypes and
indexes (ints, negative ints, slices with any start, stop and step, '...'), 1,200 cases
with a fixed seed (printed on failure). A stop past its dimension is refused rather than
clamped, as the reference package refuses it."""

import random

import numpy as np
import pytest

import stguard
import stguard.numpy as snp

DTYPES = [np.float32, np.int64, np.uint8, np.float16, np.int16, np.bool_, np.complex64,
          np.float64, np.int8, np.uint32]
SEED = 20261201
FILES = 24
TENSORS_PER_FILE = 10
INDEXES_PER_TENSOR = 5  # 24 * 10 * 5 = 1,200 cases


def random_shape(rng):
    return tuple(rng.choice([0, 1, 1, 2, 3, 4, 5, 7]) for _ in range(rng.randint(0, 4)))


def random_bound(rng, size):
    return rng.choice([None, rng.randint(-size - 3, size + 3)])


def random_item(rng, size):
    if size > 0 and rng.random() < 0.3:
        return rng.randint(-size, size - 1)
    step = rng.choice([None, 1, 2, 3, -1, -2, 5])
    return slice(random_bound(rng, size), random_bound(rng, size), step)


def random_index(rng, shape):
    count = rng.randint(0, len(shape))
    if rng.random() < 0.15:  # '...' between leading and trailing items
        lead = rng.randint(0, count)
        trail_dims = range(len(shape) - (count - lead), len(shape))
        items = [random_item(rng, shape[d]) for d in range(lead)] + [Ellipsis] + \
                [random_item(rng, shape[d]) for d in trail_dims]
    else:
        items = [random_item(rng, shape[d]) for d in range(count)]
    if len(items) == 1 and rng.random() < 0.5:
        return items[0]  # a bare int or slice, not a tuple
    return tuple(items)


def stop_beyond(index, shape):
    """Says whether a slice in ``index`` stops past its dimension (refused, not clamped)."""
    items = index if isinstance(index, tuple) else (index,)
    if Ellipsis in items:
        cut = items.index(Ellipsis)
        dims = list(range(cut)) + [None] + list(range(len(shape) - (len(items) - cut - 1), len(shape)))
    else:
        dims = list(range(len(items)))
    return any(isinstance(item, slice) and item.stop is not None and item.stop > shape[dim]
               for item, dim in zip(items, dims) if dim is not None)


def make_tensors(rng, file_number):
    tensors = {}
    for t in range(TENSORS_PER_FILE):
        shape = random_shape(rng)
        dtype = rng.choice(DTYPES)
        count = int(np.prod(shape, dtype=np.int64))
        values = np.arange(count, dtype=np.int64) * 7 + file_number
        tensors[f"t{t}"] = (values % 2 == 1) if dtype is np.bool_ else values.astype(dtype)
        tensors[f"t{t}"] = tensors[f"t{t}"].reshape(shape)
    return tensors


def test_get_slice_matches_numpy(tmp_path):
    rng = random.Random(SEED)
    cases = refused = 0
    for file_number in range(FILES):
        tensors = make_tensors(rng, file_number)
        path = tmp_path / f"s{file_number}.safetensors"
        snp.save_file(tensors, path)
        with stguard.safe_open(path, "np") as f:
            for name, expected_full in tensors.items():
                part = f.get_slice(name)
                assert part.get_shape() == list(expected_full.shape)
                for _ in range(INDEXES_PER_TENSOR):
                    index = random_index(rng, expected_full.shape)
                    context = f"seed {SEED} file {file_number} {name} shape " \
                              f"{expected_full.shape} index {index!r}"
                    if stop_beyond(index, expected_full.shape):
                        with pytest.raises(stguard.SafetensorError, match="out of bounds for tensor dimension"):
                            part[index]
                        refused += 1
                        continue
                    expected = expected_full[index]
                    got = part[index]
                    assert got.dtype == expected.dtype, context
                    assert got.shape == expected.shape, context
                    assert got.flags.c_contiguous, context
                    np.testing.assert_array_equal(got, expected, err_msg=context)
                    cases += 1
    assert cases >= 800 and refused >= 100


def test_torch_slices_match_numpy(tmp_path):
    torch = pytest.importorskip("torch")
    rng = random.Random(SEED + 1)
    path = tmp_path / "t.safetensors"
    base = np.arange(5 * 6 * 7, dtype=np.float32).reshape(5, 6, 7)
    snp.save_file({"x": base}, path)
    with stguard.safe_open(path, "pt") as f:
        part = f.get_slice("x")
        for _ in range(200):
            index = random_index(rng, base.shape)
            if stop_beyond(index, base.shape):
                with pytest.raises(stguard.SafetensorError, match="out of bounds for tensor dimension"):
                    part[index]
                continue
            got = part[index]
            assert isinstance(got, torch.Tensor)
            np.testing.assert_array_equal(got.numpy(), base[index], err_msg=repr(index))


def test_bad_indexes_raise_safetensor_error(tmp_path):
    path = tmp_path / "b.safetensors"
    snp.save_file({"x": np.zeros((3, 4), np.float32)}, path)
    with stguard.safe_open(path, "np") as f:
        part = f.get_slice("x")
        for index in (3, -4, (0, 4), (0, 0, 0), slice(0, 2, 0), "a", [0, 1], None, 1.5,
                      (Ellipsis, Ellipsis), slice(0.5, 2), True):
            with pytest.raises(stguard.SafetensorError) as raised:
                part[index]
            assert raised.value.code == "InvalidArgument", index
            assert raised.value.tensor == "x"
        assert part[2, -1].shape == ()  # the accept side of the same bounds
        assert part[-3].shape == (4,)
        assert len(part) == 3 and part.get_dtype() == "F32"
