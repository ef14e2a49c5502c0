# SPDX-License-Identifier: Apache-2.0
"""get_slice where the reference package differs from numpy, under numpy and torch: an
empty list selects nothing, a non-empty list is refused with the reference's message, a
stop past its dimension is an error (not clamped), and the messages name the slice and
the shape. Steps keep working (the reference ignores them)."""

import numpy as np
import pytest

import stguard
import stguard.numpy as snp

BASE = np.arange(10 * 6, dtype=np.float32).reshape(10, 6)


def frameworks():
    yield "np", np.asarray
    try:
        import torch  # noqa: F401
    except ImportError:
        print("torch is not installed: the torch half of the slice tests is skipped")
        return
    yield "pt", lambda tensor: tensor.numpy()


@pytest.fixture
def path(tmp_path):
    file = tmp_path / "s.safetensors"
    snp.save_file({"x": BASE, "scalar": np.float32(3.0)}, file)
    return file


@pytest.mark.parametrize("backend", ["mmap", "pread"])
def test_empty_list_selects_nothing(path, backend):
    for framework, to_numpy in frameworks():
        with stguard.safe_open(path, framework, backend=backend) as f:
            empty = to_numpy(f.get_slice("x")[[]])
            assert empty.shape == (0, 6) and empty.dtype == np.float32


def test_non_empty_list_is_refused(path):
    for framework, _ in frameworks():
        with stguard.safe_open(path, framework) as f:
            for index in ([0], [0, 1], [slice(0, 2)]):
                with pytest.raises(stguard.SafetensorError) as raised:
                    f.get_slice("x")[index]
                # The reference's text exactly; stguard's fields beside it.
                assert str(raised.value) == "Non empty lists are not implemented"
                assert raised.value.tensor == "x" and raised.value.code == "InvalidArgument"


def test_stop_past_the_dimension_is_an_error(path):
    for framework, to_numpy in frameworks():
        with stguard.safe_open(path, framework) as f:
            part = f.get_slice("x")
            for index, described in ((slice(None, 20), "[:20]"), ((slice(0, 3), slice(2, 7)), "[0:3, 2:7]"),
                                     ((Ellipsis, slice(0, 7, 2)), "[..., 0:7:2]"),
                                     ((5, slice(None, 9)), "[5, :9]")):
                with pytest.raises(stguard.SafetensorError) as raised:
                    part[index]
                message = str(raised.value)
                assert f"slicing {described}" in message and "shape [10, 6]" in message, message
                assert raised.value.code == "InvalidArgument"
            # the accept side: a stop equal to the dimension, and steps on any dimension
            np.testing.assert_array_equal(to_numpy(part[:10]), BASE)
            np.testing.assert_array_equal(to_numpy(part[..., 0:6:2]), BASE[:, 0:6:2])
            np.testing.assert_array_equal(to_numpy(part[8:10, ::-2]), BASE[8:10, ::-2])
            np.testing.assert_array_equal(to_numpy(part[1:9:3, 1::4]), BASE[1:9:3, 1::4])
            np.testing.assert_array_equal(to_numpy(part[-3:, -1]), BASE[-3:, -1])


def test_out_of_range_index_messages_name_slice_and_shape(path):
    with stguard.safe_open(path, "np") as f:
        with pytest.raises(stguard.SafetensorError) as raised:
            f.get_slice("x")[10]
        assert "slicing [10]" in str(raised.value) and "shape [10, 6]" in str(raised.value)
        for index, described in (((0, 0, 0), "[0, 0, 0]"), ((slice(0, 2, 0),), "[0:2:0]"),
                                  ("a", "['a']")):
            with pytest.raises(stguard.SafetensorError) as raised:
                f.get_slice("x")[index]
            assert f"slice {described} for shape [10, 6]" in str(raised.value)
        with pytest.raises(stguard.SafetensorError):
            f.get_slice("scalar")[[]]  # a scalar has no dimension to select from
        assert f.get_slice("scalar")[()] == 3.0
