# SPDX-License-Identifier: Apache-2.0
"""Which torch tensors share memory: the helpers other libraries import from
``safetensors.torch`` (``storage_ptr``, ``storage_size``, ``_end_ptr``, ``_is_complete``,
``_find_shared_tensors``, ``_remove_duplicate_names``), with the reference's results, and
the stricter overlap test ``save_file`` refuses with.

Two tensors are candidates for sharing when they live on one device in one storage
(same start address, same byte size). The reference then splits each candidate group by
address ranges walked in order, each tensor compared with the previous one's end; tied
weights (two names, one tensor) stay together, disjoint slices of one buffer are apart.
"""

from collections import defaultdict
from typing import Dict, List, Optional, Set, Tuple

import torch


def storage_ptr(tensor: torch.Tensor) -> int:
    """Returns the address where the tensor's storage starts (0 for a meta tensor).
    torch before 2.0 has no ``untyped_storage()``: its typed ``storage()`` is used.

    Example:
        >>> base = torch.zeros(10)
        >>> storage_ptr(base[2:]) == base.data_ptr()
        True
    """
    try:
        return tensor.untyped_storage().data_ptr()
    except Exception:  # torch < 2.0 has no untyped_storage; the reference falls back too
        try:
            return tensor.storage().data_ptr()
        except NotImplementedError:  # a meta tensor has no memory
            return 0


def storage_size(tensor: torch.Tensor) -> int:
    """Returns the byte size of the tensor's whole storage (for a meta tensor, of the
    tensor itself, as torch 2 reports it).

    Example:
        >>> storage_size(torch.zeros(10)[2:])
        40
    """
    try:
        return tensor.untyped_storage().nbytes()
    except AttributeError:  # torch < 2.0: a typed storage counts elements
        try:
            return tensor.storage().size() * tensor.element_size()
        except NotImplementedError:
            return tensor.nelement() * tensor.element_size()


def _end_ptr(tensor: torch.Tensor) -> int:
    """Returns the address just past the tensor's last element in row-major order (its
    start when it is empty). The reference finds that element through ``view(-1)``,
    which raises for strides a flat view cannot express (a transpose, an ``expand``); the
    same element is found here from the strides, so those get an answer too."""
    if tensor.nelement() == 0:
        return tensor.data_ptr()
    last = sum((size - 1) * stride for size, stride in zip(tensor.shape, tensor.stride()))
    return tensor.data_ptr() + (last + 1) * tensor.element_size()


def _is_complete(tensor: torch.Tensor) -> bool:
    """Says whether the tensor starts at its storage's start and covers all of it."""
    return tensor.data_ptr() == storage_ptr(tensor) and \
        tensor.nelement() * tensor.element_size() == storage_size(tensor)


def _split_by_overlap(groups: List[Set[str]], state_dict: Dict[str, torch.Tensor]) -> List[Set[str]]:
    """Splits each same-storage group into runs of tensors that overlap the previous one
    (by start address; a tensor starting at or after the previous end starts a new run)."""
    result: List[Set[str]] = []
    for group in groups:
        if len(group) < 2:
            result.append(group)
            continue
        areas = sorted((state_dict[name].data_ptr(), _end_ptr(state_dict[name]), name)
                       for name in group)
        _, previous_stop, first_name = areas[0]
        result.append({first_name})
        for start, stop, name in areas[1:]:
            if start >= previous_stop:
                result.append({name})
            else:
                result[-1].add(name)
            previous_stop = stop
    return result


def _find_shared_tensors(state_dict: Dict[str, torch.Tensor]) -> List[Set[str]]:
    """Returns the tensor names grouped by shared memory, one set per group (a tensor
    sharing nothing is a set of one). Meta tensors and empty storages share nothing.

    Example:
        >>> base = torch.zeros(10)
        >>> _find_shared_tensors({"a": base, "b": base, "x": torch.zeros(1)}) == [{"a", "b"}, {"x"}]
        True
    """
    by_storage: Dict[Tuple[torch.device, int, int], Set[str]] = defaultdict(set)
    for name, tensor in state_dict.items():
        if tensor.device == torch.device("meta"):
            continue
        start, size = storage_ptr(tensor), storage_size(tensor)
        if start != 0 and size != 0:
            by_storage[(tensor.device, start, size)].add(name)
    # The reference sorts the groups (sets compare by inclusion; disjoint ones keep
    # their first-seen order); the same order is kept here.
    return _split_by_overlap(sorted(by_storage.values()), state_dict)


def _remove_duplicate_names(state_dict: Dict[str, torch.Tensor], *,
                            preferred_names: Optional[List[str]] = None,
                            discard_names: Optional[List[str]] = None) -> Dict[str, List[str]]:
    """Returns ``{kept name: [the other names of its group, sorted]}`` for each group of
    tensors sharing memory. The kept name covers the whole storage: the first in sorted
    order, preferring names not in ``discard_names`` and then names in
    ``preferred_names``. Raises RuntimeError for a group where no name covers it all.

    Example:
        >>> weight = torch.zeros(4)
        >>> dict(_remove_duplicate_names({"embed": weight, "lm_head": weight}))
        {'embed': ['lm_head']}
    """
    preferred = set(preferred_names or [])
    discarded = set(discard_names or [])
    removals: Dict[str, List[str]] = defaultdict(list)
    for group in _find_shared_tensors(state_dict):
        complete = {name for name in group if _is_complete(state_dict[name])}
        if not complete:
            raise RuntimeError(
                f"cannot choose a name to keep among the tensors sharing memory {group}: none "
                f"covers the entire storage, so saving it would store more memory than needed. "
                f"Save a .clone() of the part you need instead.")
        keep = min(complete)
        if complete - discarded:
            keep = min(complete - discarded)
        if preferred & complete:
            keep = min(preferred & complete)
        for name in sorted(group):
            if name != keep:
                removals[keep].append(name)
    return removals


def _byte_range(tensor: torch.Tensor) -> Tuple[int, int]:
    """Returns [start, stop) of the bytes the tensor's elements can touch."""
    start = tensor.data_ptr()
    if tensor.numel() == 0:
        return start, start
    return start, _end_ptr(tensor)


def overlapping_groups(tensors: Dict[str, torch.Tensor]) -> List[Set[str]]:
    """Returns the groups (of two or more) of tensors whose bytes overlap within one
    storage, which ``save_file`` refuses. Stricter than ``_find_shared_tensors``: a tensor
    is compared with the furthest end seen so far, not only the previous tensor's, so a
    small slice between them cannot hide an overlap with a large one."""
    by_storage: Dict[Tuple[torch.device, int, int], List[str]] = defaultdict(list)
    for name, tensor in tensors.items():
        if tensor.device.type == "meta":
            continue
        start, size = storage_ptr(tensor), storage_size(tensor)
        if start != 0 and size != 0:
            by_storage[(tensor.device, start, size)].append(name)
    groups = []
    for names in by_storage.values():
        if len(names) < 2:
            continue
        areas = sorted((*_byte_range(tensors[name]), name) for name in names)
        current, furthest_stop = {areas[0][2]}, areas[0][1]
        for start, stop, name in areas[1:]:
            if start < furthest_stop:
                current.add(name)
            else:
                if len(current) > 1:
                    groups.append(current)
                current = {name}
            furthest_stop = max(furthest_stop, stop)
        if len(current) > 1:
            groups.append(current)
    return groups
