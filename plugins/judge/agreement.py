"""Fleiss' kappa: how much more raters agree than their category frequencies would by chance.

Fleiss (1971): N subjects, each put into one of k categories by the same number n of
raters; ``counts[i][j]`` is how many raters put subject i into category j. The observed
agreement P̄ is the mean over subjects of the share of agreeing rater pairs; chance
agreement P_e is the sum of the squared overall category shares; kappa = (P̄ - P_e) /
(1 - P_e). Culkin et al. 2021 report 0.5641 on binarized (accept/reject) judgments of
system outputs.
"""

from __future__ import annotations

import math
from collections.abc import Sequence


def fleiss_kappa(counts: Sequence[Sequence[int]]) -> float:
    """Fleiss' kappa of a subjects x categories count table (NaN when chance agreement is 1).

    Every row must sum to the same number of raters, at least 2.
    """
    if not counts:
        raise ValueError("no subjects to compute agreement on")
    raters = sum(counts[0])
    if raters < 2 or any(sum(row) != raters for row in counts):
        raise ValueError(f"every subject needs the same number (>= 2) of ratings; got {sorted({sum(r) for r in counts})}")
    subjects = len(counts)
    observed = sum((sum(c * c for c in row) - raters) / (raters * (raters - 1)) for row in counts) / subjects
    shares = [sum(row[j] for row in counts) / (subjects * raters) for j in range(len(counts[0]))]
    chance = sum(p * p for p in shares)
    # Every rating in one category: agreement is perfect but kappa is undefined.
    return math.nan if math.isclose(chance, 1.0) else (observed - chance) / (1 - chance)
