# SPDX-License-Identifier: Apache-2.0
"""stguard on a Dask cluster: the same checks as ``stguard.check_many``, partitioned.

Only paths (or URLs) and envelope dicts pass through the scheduler: each worker reads
its partition's files itself (a shared filesystem, or each its own ranges of a URL) and
checks them with ``check_many`` on its own threads. Needs ``distributed`` (Debian:
python3-distributed, python3-dask); ``to_dataframe`` needs ``pandas``.

Example:
    >>> from distributed import Client
    >>> import stguard.dask
    >>> client = Client("tcp://scheduler:8786")
    >>> bag = stguard.dask.check(paths, client=client)
    >>> stguard.dask.summary(bag)["refused"]
"""

from typing import Any, Dict, Iterable, List, Optional

try:
    import dask.bag
    import distributed
except ImportError as missing:  # the package is optional: say which one to install
    raise ImportError(
        "stguard.dask needs the 'distributed' package (and 'dask'): pip install "
        "distributed, or apt install python3-distributed") from missing

from ._many import check_many

_VERDICTS = ("valid", "invalid", "refused", "error")


def _check_partition(paths: List[str], workers: Optional[int]) -> List[Dict[str, Any]]:
    return check_many(paths, workers)


def check(paths_or_urls: Iterable[str], client: Optional["distributed.Client"] = None,
          partition_size: int = 1000, workers: Optional[int] = None) -> "dask.bag.Bag":
    """Returns the bag of envelope dicts (as ``check_many`` gives them), one per input,
    in input order: ``dask.bag.from_sequence(paths, partition_size=...)`` mapped by
    partitions through ``check_many`` (``workers`` threads per partition, default one per
    core of the worker). Lazy, like any bag; with ``client``, it is persisted there (the
    checks start at once and the bag keeps their results on the workers)."""
    if partition_size < 1:
        raise ValueError("partition_size must be at least 1")
    bag = dask.bag.from_sequence([str(p) for p in paths_or_urls],
                                 partition_size=partition_size)
    bag = bag.map_partitions(_check_partition, workers)
    return client.persist(bag) if client is not None else bag


def summary(bag: "dask.bag.Bag") -> Dict[str, Any]:
    """Counts the bag's verdicts and lists what is not valid: ``{"files": N, "valid": ..,
    "invalid": .., "refused": .., "error": .., "not_valid": [envelope, ...]}``."""
    envelopes = bag.filter(lambda e: e["verdict"] != "valid").compute()
    counts = dict(bag.pluck("verdict").frequencies().compute())
    result: Dict[str, Any] = {"files": sum(counts.values())}
    for verdict in _VERDICTS:
        result[verdict] = counts.get(verdict, 0)
    result["not_valid"] = envelopes
    return result


def to_dataframe(bag: "dask.bag.Bag"):
    """One row per file (pandas): file, format, verdict, code, message, offset, member,
    tensor (None where the envelope has no such field)."""
    import pandas  # only this function needs it
    columns = ["file", "format", "verdict", "code", "message", "offset", "member", "tensor"]
    rows = bag.map(lambda e: {column: e.get(column) for column in columns}).compute()
    return pandas.DataFrame(rows, columns=columns)
