"""One retrieval's scoring: each term normalised over the records that pass the filters
(Generative Agents' min-max), and how far a record's recency and importance can carry it."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from autonoma.memory.records import HOUR, RetrievalWeights

# Each candidate's score, recency, importance and relevance.
Terms = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


@dataclass
class Scale:
    """One retrieval's normalisation: each term's lowest and highest value over every record
    that passes the filters, so a candidate scores as it would among all of them."""

    weights: RetrievalWeights
    now: float
    importance_range: tuple[float, float]
    accessed_range: tuple[float, float]  # oldest and newest last access
    cosine: tuple[float, float] | None = None  # None: no query, relevance counts nothing

    def fresh(self, accessed: np.ndarray) -> np.ndarray:
        return np.asarray(
            self.weights.decay_per_hour ** (np.maximum(0.0, self.now - accessed) / HOUR)
        )

    def partial(self, importance: np.ndarray, accessed: np.ndarray) -> np.ndarray:
        """The recency and importance part of the score."""
        oldest, newest = self.fresh(np.array(self.accessed_range))
        recency = min_max(self.fresh(accessed), float(oldest), float(newest))
        w = self.weights
        return w.recency * recency + w.importance * min_max(importance, *self.importance_range)

    def relevance(self, cosine: float) -> float:
        assert self.cosine is not None
        return float(min_max(np.array([cosine]), *self.cosine)[0])

    def terms(
        self, importance: np.ndarray, accessed: np.ndarray, cosine: np.ndarray | None
    ) -> Terms:
        oldest, newest = self.fresh(np.array(self.accessed_range))
        recency = min_max(self.fresh(accessed), float(oldest), float(newest))
        importance = min_max(importance.astype(np.float64), *self.importance_range)
        if cosine is None or self.cosine is None:
            relevance, w_relevance = np.zeros(len(importance)), 0.0
        else:
            relevance, w_relevance = min_max(cosine, *self.cosine), self.weights.relevance
        w = self.weights
        score = w.recency * recency + w.importance * importance + w_relevance * relevance
        return score, recency, importance, relevance

    def accessed_floor(self, importance: float, needed: float) -> float:
        """The last access after which a record of this importance has a recency and
        importance part above `needed` (-inf: every one has; inf: none has). It errs early:
        a record let in by rounding is only scored, never one left out."""
        w = self.weights
        base = w.importance * float(min_max(np.array([importance]), *self.importance_range)[0])
        rest = needed - base - 1e-9  # what the recency part must exceed
        low, high = (float(f) for f in self.fresh(np.array(self.accessed_range)))
        if w.recency <= 0 or high - low < 1e-12:  # recency adds the same to every record
            same = 0.0 if w.recency <= 0 else 0.5 * w.recency
            return -math.inf if same > rest else math.inf
        fresh = low + rest / w.recency * (high - low)  # decay ** hours must exceed this
        if fresh < low or fresh <= 0:
            return -math.inf
        if fresh >= 1:
            return math.inf
        return self.now - HOUR * math.log(fresh) / math.log(w.decay_per_hour)


def min_max(values: np.ndarray, low: float | None = None, high: float | None = None) -> np.ndarray:
    if not values.size:
        return values.astype(np.float64)
    low = float(values.min()) if low is None else low
    high = float(values.max()) if high is None else high
    if high - low < 1e-12:
        return np.full(values.shape, 0.5)
    return (values - low) / (high - low)
