# SPDX-License-Identifier: Apache-2.0
"""Where the reference safetensors package raises, stguard raises the same built-in class
with the same text (``str(error)``), and keeps its own fields (code, offset, tensor):
code written against either keeps working. Also the non-contiguous rule of the torch
writers and save_model's force_contiguous."""

import numpy as np
import pytest

import stguard
import stguard.numpy as snp

torch = pytest.importorskip("torch")
import stguard.torch as storch  # noqa: E402


def test_missing_file_text(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for backend in ("mmap", "pread"):
        with pytest.raises(FileNotFoundError) as raised:
            with stguard.safe_open("notafile", framework="pt", backend=backend):
                pass
        assert str(raised.value) == "No such file or directory: notafile"
        assert isinstance(raised.value, stguard.SafetensorError)
        assert raised.value.code == "IoError"
    # Accept: a file that is there opens.
    snp.save_file({"a": np.zeros(1)}, "there")
    with stguard.safe_open("there", framework="pt") as f:
        assert list(f.keys()) == ["a"]


def test_not_a_tensor_not_a_dict_and_sparse_texts(tmp_path):
    out = tmp_path / "out.safetensors"
    with pytest.raises(ValueError) as raised:
        storch.save_file({"test": {"some": "thing"}}, out)
    assert str(raised.value) == \
        "Key `test` is invalid, expected torch.Tensor but received <class 'dict'>"
    assert raised.value.code == "InvalidArgument" and raised.value.tensor == "test"
    with pytest.raises(ValueError) as raised:
        storch.save_file("notadict", out)
    assert str(raised.value) == \
        "Expected a dict of [str, torch.Tensor] but received <class 'str'>"
    with pytest.raises(ValueError) as raised:
        storch.save_file({"test": torch.sparse_coo_tensor(size=(2, 3)), "ok": torch.ones(1),
                          "b": torch.zeros(2).to_sparse()}, out)
    assert str(raised.value) == (
        "You are trying to save a sparse tensors: `['test', 'b']` which this library does "
        "not support. You can make it a dense tensor before saving with `.to_dense()` but "
        "be aware this might make a much larger file than needed.")
    assert raised.value.tensor == "test"
    assert not out.exists()
    storch.save_file({"test": torch.sparse_coo_tensor(size=(2, 3)).to_dense()}, out)
    assert storch.load_file(out)["test"].shape == (2, 3)


def test_non_contiguous_refused_by_save_file_and_save():
    x = torch.arange(6, dtype=torch.float32).reshape((1, 2, 3))[:, :, 1]
    assert not x.is_contiguous()
    for write in (lambda: storch.save({"test": x}),
                  lambda: storch.save_file({"test": x}, "never-written.safetensors")):
        with pytest.raises(ValueError) as raised:
            write()
        assert "non contiguous tensor: `test`" in str(raised.value)
        assert raised.value.code == "InvalidArgument" and raised.value.tensor == "test"
    assert torch.equal(storch.load(storch.save({"test": x.contiguous()}))["test"], x)


class NonContiguous(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(3, 4)
        self.linear.weight = torch.nn.Parameter(torch.randn(3, 4).t())


def test_save_model_force_contiguous(tmp_path):
    model = NonContiguous()
    path = tmp_path / "model.safetensors"
    with pytest.raises(ValueError) as raised:
        storch.save_model(model, path, force_contiguous=False)
    assert "use save_model(..., force_contiguous=True)" in str(raised.value)
    assert raised.value.tensor == "linear.weight" and not path.exists()
    storch.save_model(model, path, force_contiguous=True)
    storch.save_model(model, path)  # the default, as the reference's
    again = NonContiguous()
    storch.load_model(again, path)
    assert torch.equal(again.linear.weight, model.linear.weight)


@pytest.fixture
def ten_by_five(tmp_path):
    path = tmp_path / "t.safetensors"
    snp.save_file({"test": np.arange(50, dtype=np.float32).reshape(10, 5)}, path)
    return path


@pytest.mark.parametrize("framework", ["np", "pt"])
def test_slice_index_texts(ten_by_five, framework):
    with stguard.safe_open(ten_by_five, framework=framework) as f:
        part = f.get_slice("test")
        # Accept: the last valid indexes, both signs.
        assert list(part[2:, -5].shape) == [8] and list(part[2:, 4].shape) == [8]
        assert list(part[:10].shape) == [10, 5]
        texts = [
            ((slice(2, None), -6), "Invalid index -6 for dimension 1 of size 5"),
            ((slice(2, None), 20), "Error during slicing [2:, 20] with shape [10, 5]: index 20 "
                                   "out of bounds for tensor dimension #1 of size 5"),
            (slice(None, 20), "Error during slicing [:20] with shape [10, 5]: index 19 out of "
                              "bounds for tensor dimension #0 of size 10"),
            ((slice(None), slice(None, 20)), "Error during slicing [:, :20] with shape "
                                             "[10, 5]: index 19 out of bounds for tensor "
                                             "dimension #1 of size 5"),
        ]
        for index, text in texts:
            with pytest.raises(stguard.SafetensorError) as raised:
                part[index]
            assert str(raised.value) == text
            assert raised.value.code == "InvalidArgument" and raised.value.tensor == "test"
        with pytest.raises(stguard.SafetensorError) as raised:
            part[[0, 1]]
        assert str(raised.value) == "Non empty lists are not implemented"
