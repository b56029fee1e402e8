"""The ANN index beside the memory store: FAISS inner product over unit vectors (= cosine),
keyed by record id. Exact (flat) while small; HNSW once it holds `hnsw_from` vectors, where a
flat scan would cost too much per query."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from autonoma.errors import AutonomaError

HNSW_FROM = 20_000
HNSW_M = 32
HNSW_EF_CONSTRUCTION = 64


class IndexUnavailable(AutonomaError):
    """FAISS is not installed."""


def _faiss() -> Any:
    try:
        import faiss
    except ImportError as error:
        raise IndexUnavailable(
            "the memory index needs faiss: pip install 'autonoma[memory]'"
        ) from error
    return faiss


class VectorIndex:
    def __init__(self, dim: int, *, hnsw_from: int = HNSW_FROM) -> None:
        self.dim = dim
        self.hnsw_from = hnsw_from
        self._faiss = _faiss()
        self._index = self._new(flat=True)
        self.max_id = 0

    @property
    def kind(self) -> str:
        inner = self._faiss.downcast_index(self._index.index)
        return "flat" if isinstance(inner, self._faiss.IndexFlatIP) else "hnsw"

    def __len__(self) -> int:
        return int(self._index.ntotal)

    def _new(self, *, flat: bool) -> Any:
        faiss = self._faiss
        if flat:
            inner = faiss.IndexFlatIP(self.dim)
        else:
            inner = faiss.IndexHNSWFlat(self.dim, HNSW_M, faiss.METRIC_INNER_PRODUCT)
            inner.hnsw.efConstruction = HNSW_EF_CONSTRUCTION
        return faiss.IndexIDMap2(inner)

    def add(self, ids: npt.NDArray[np.int64], vectors: npt.NDArray[np.float32]) -> None:
        if not len(ids):
            return
        if self.kind == "flat" and len(self) + len(ids) >= self.hnsw_from:
            self._become_hnsw()
        self._index.add_with_ids(np.ascontiguousarray(vectors, dtype=np.float32), ids)
        self.max_id = max(self.max_id, int(ids.max()))

    def _become_hnsw(self) -> None:
        old = self._index
        ids = self._faiss.vector_to_array(old.id_map).astype(np.int64)
        inner = self._faiss.downcast_index(old.index)
        vectors = inner.reconstruct_n(0, old.ntotal) if old.ntotal else None
        self._index = self._new(flat=False)
        if vectors is not None:
            self._index.add_with_ids(vectors, ids)

    def search(
        self, vector: npt.NDArray[np.float32], k: int, *, ef: int | None = None
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
        """The ids of the k nearest vectors (by inner product) and their similarities, best
        first. `ef` (HNSW only): how many candidates the search keeps, at least k and 128;
        more is slower and misses fewer (default: twice k)."""
        if not len(self):
            return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float32)
        k = min(k, len(self))
        params = None
        if self.kind == "hnsw":
            ef = max(k, 128, 2 * k if ef is None else ef)
            params = self._faiss.SearchParametersHNSW(efSearch=ef)
        with self._one_thread():
            sims, ids = self._index.search(
                vector.reshape(1, -1).astype(np.float32), k, params=params
            )
        keep = ids[0] >= 0
        return ids[0][keep].astype(np.int64), sims[0][keep]

    def vectors(self, ids: npt.NDArray[np.int64]) -> npt.NDArray[np.float32]:
        """The stored vectors of these ids (all must be in the index)."""
        if not len(ids):
            return np.empty((0, self.dim), dtype=np.float32)
        with self._one_thread():
            vectors = self._index.reconstruct_batch(ids.astype(np.int64))
        return np.asarray(vectors, dtype=np.float32)

    @contextmanager
    def _one_thread(self) -> Iterator[None]:
        """FAISS's OpenMP on this thread limited to one thread meanwhile: for one query, a team
        of threads costs more than it saves (IndexIDMap2 maps the ids back in a parallel loop),
        and on a busy machine waiting for the team's other threads takes milliseconds. The
        setting is the calling thread's own, and is put back."""
        before = self._faiss.omp_get_max_threads()
        self._faiss.omp_set_num_threads(1)
        try:
            yield
        finally:
            self._faiss.omp_set_num_threads(before)

    def similarities(
        self, vector: npt.NDArray[np.float32], ids: npt.NDArray[np.int64]
    ) -> npt.NDArray[np.float32]:
        """The inner products of `vector` with the stored vectors of these ids (all must be in
        the index), in the order of `ids`."""
        if self.kind == "flat" and 4 * len(ids) > len(self):
            # Scoring every vector in one flat scan beats fetching a large share one by one.
            found, sims = self.search(vector, len(self))
            order = np.argsort(found)
            return sims[order][np.searchsorted(found[order], ids)]
        return self.vectors(ids) @ vector.reshape(-1).astype(np.float32)

    def ids(self) -> npt.NDArray[np.int64]:
        return np.asarray(self._faiss.vector_to_array(self._index.id_map), dtype=np.int64)

    def save(self, path: Path) -> None:
        tmp = path.with_suffix(path.suffix + ".tmp")
        self._faiss.write_index(self._index, str(tmp))
        tmp.replace(path)  # a reader never sees half a file

    @classmethod
    def load(cls, path: Path, dim: int, *, hnsw_from: int = HNSW_FROM) -> VectorIndex:
        """The saved index; ValueError if the file is unreadable or of another dimension."""
        index = cls(dim, hnsw_from=hnsw_from)
        try:
            loaded = index._faiss.read_index(str(path))
        except RuntimeError as error:
            raise ValueError(f"unreadable index: {error}") from error
        if loaded.d != dim or not hasattr(loaded, "id_map"):
            raise ValueError(f"index of dimension {loaded.d}, expected {dim}")
        index._index = loaded  # read_index gives the concrete type (IndexIDMap2)
        ids = index.ids()
        index.max_id = int(ids.max()) if len(ids) else 0
        return index
