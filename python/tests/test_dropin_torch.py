# SPDX-License-Identifier: Apache-2.0
"""stguard.torch as a drop-in: save_model/load_model with tied weights, the shared-memory
helpers other libraries import (with the results the reference's algorithm gives, worked
out by hand below), and the reference's exception types."""

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="torch is not installed: stguard.torch untested")

import stguard  # noqa: E402
import stguard.torch as storch  # noqa: E402
from stguard.torch import (_end_ptr, _find_shared_tensors, _is_complete,  # noqa: E402
                           _remove_duplicate_names, storage_ptr, storage_size)


class TiedModel(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(10, 4)
        self.norm = torch.nn.LayerNorm(4)
        self.head = torch.nn.Linear(4, 10, bias=False)
        self.head.weight = self.embed.weight  # tied: one tensor, two names


def test_storage_helpers_on_slices_and_meta():
    base = torch.arange(10, dtype=torch.float32)
    tail = base[2:]
    assert storage_ptr(tail) == base.data_ptr() and storage_size(tail) == 40
    assert _end_ptr(tail) == base.data_ptr() + 40 and _end_ptr(base[:0]) == base[:0].data_ptr()
    assert _end_ptr(base[::2]) == base.data_ptr() + 8 * 4 + 4  # last element is base[8]
    assert _is_complete(base) and not _is_complete(tail) and not _is_complete(base[:5])
    meta = torch.empty(3, device="meta")
    assert storage_ptr(meta) == 0 and storage_size(meta) == 12


def test_find_shared_tensors_groups():
    base = torch.zeros(10)
    lone = torch.zeros(2)
    assert _find_shared_tensors({"a": base, "b": base, "lone": lone}) == [{"a", "b"}, {"lone"}]
    # disjoint slices of one storage are apart; overlapping ones together
    assert _find_shared_tensors({"x": base[:5], "y": base[5:]}) == [{"x"}, {"y"}]
    assert _find_shared_tensors({"x": base[:6], "y": base[4:]}) == [{"x", "y"}]
    # interleaved strides: odd starts inside even's span
    assert _find_shared_tensors({"even": base[::2], "odd": base[1::2]}) == [{"even", "odd"}]
    # a transpose covers the same bytes as its source
    square = torch.zeros(3, 4)
    assert _find_shared_tensors({"t": square, "tt": square.t()}) == [{"t", "tt"}]
    assert _find_shared_tensors({"m": torch.empty(2, device="meta")}) == []


def test_remove_duplicate_names_choices():
    base = torch.zeros(4)
    tied = {"a": base, "b": base, "c": base}
    assert _remove_duplicate_names(tied) == {"a": ["b", "c"]}
    assert _remove_duplicate_names(tied, discard_names=["a"]) == {"b": ["a", "c"]}
    assert _remove_duplicate_names(tied, preferred_names=["c"], discard_names=["a"]) == \
        {"c": ["a", "b"]}
    assert _remove_duplicate_names({"whole": base, "lone": torch.zeros(1)}) == {}
    # a group where no name covers the storage, even a group of one slice, is refused
    for state in ({"x": base[:3], "y": base[1:]}, {"x": base[:2], "y": base[2:]}):
        with pytest.raises(RuntimeError, match="none covers the entire storage"):
            _remove_duplicate_names(state)


def test_save_model_and_load_model_with_tied_weights(tmp_path):
    torch.manual_seed(0)
    model = TiedModel()
    path = tmp_path / "model.safetensors"
    storch.save_model(model, path, metadata={"format": "pt"})
    with stguard.safe_open(path, "pt") as f:
        assert f.keys() == ["embed.weight", "norm.bias", "norm.weight"]
        assert f.metadata() == {"format": "pt", "head.weight": "embed.weight"}
    fresh = TiedModel()
    missing, unexpected = storch.load_model(fresh, path)
    assert (set(missing), unexpected) == (set(), [])
    assert torch.equal(fresh.embed.weight, model.embed.weight)
    assert fresh.head.weight is fresh.embed.weight  # still tied
    assert torch.equal(fresh.norm.weight, model.norm.weight)
    caller_metadata = {"format": "pt"}
    storch.save_model(model, tmp_path / "again.safetensors", metadata=caller_metadata)
    assert caller_metadata == {"format": "pt"}  # the caller's dict is not changed


def test_load_model_reports_missing_and_unexpected(tmp_path):
    model = TiedModel()
    path = tmp_path / "partial.safetensors"
    storch.save_file({"embed.weight": torch.zeros(10, 4), "extra": torch.ones(1)}, path)
    with pytest.raises(RuntimeError) as raised:
        storch.load_model(TiedModel(), path)
    assert 'Missing key(s) in state_dict: "norm.bias", "norm.weight"' in str(raised.value)
    assert 'Unexpected key(s) in state_dict: "extra"' in str(raised.value)
    missing, unexpected = storch.load_model(model, path, strict=False)
    assert set(missing) == {"norm.bias", "norm.weight"} and unexpected == ["extra"]
    assert torch.count_nonzero(model.head.weight) == 0  # the alias took the file's value
    with pytest.raises(ValueError):
        storch.load_model(model, path, backend="nope")
    storch.load_model(model, path, strict=False, backend="pread")


def test_save_file_refuses_shared_memory_with_the_advice(tmp_path):
    model = TiedModel()
    with pytest.raises(RuntimeError, match="save_model") as raised:
        storch.save_file(model.state_dict(), tmp_path / "tied.safetensors")
    assert isinstance(raised.value, stguard.SafetensorError)
    assert not (tmp_path / "tied.safetensors").exists()
    base = torch.zeros(10)
    with pytest.raises(RuntimeError):  # interleaved strides overlap too
        storch.save({"even": base[::2], "odd": base[1::2]})
    # disjoint slices of one storage are fine, saved as their own bytes
    loaded = storch.load(storch.save({"x": base[:5], "y": base[5:]}))
    assert loaded["x"].shape == (5,) and loaded["y"].shape == (5,)


def test_save_exception_types_torch():
    for tensors, kind in (([torch.zeros(1)], ValueError), ({"a": np.zeros(1)}, ValueError),
                          ({"a": torch.zeros(2).to_sparse()}, ValueError),
                          ({1: torch.zeros(1)}, TypeError)):
        with pytest.raises(kind) as raised:
            storch.save(tensors)
        assert isinstance(raised.value, stguard.SafetensorError)
    with pytest.raises(TypeError):
        storch.save({"a": torch.zeros(1)}, metadata={"k": 2})
    # A non-contiguous tensor is refused, as by the reference; made contiguous, it saves.
    square = torch.arange(6.0).reshape(2, 3)
    with pytest.raises(ValueError) as raised:
        storch.save({"t": square.t()})
    assert isinstance(raised.value, stguard.SafetensorError) and raised.value.tensor == "t"
    assert torch.equal(storch.load(storch.save({"t": square.t().contiguous()}))["t"], square.t())


def test_helper_docstring_examples_hold():
    import doctest

    import stguard._torch_shared as helpers
    result = doctest.testmod(helpers, extraglobs={"torch": torch})
    assert result.attempted >= 4 and result.failed == 0
