"""Reading order for a chunked pruning pass: the chunks most likely to matter first.

A small model on a CPU reads a few hundred tokens a second, so a large output may not be
read whole within the pass's time limit. The chunks are then read best-first: each is
scored by the focus words it contains (``output_prune_context``, else the question),
weighted by how rare each word is across the chunks (a word in every chunk says nothing
about where to look), and the pass starts with the highest score. The score only orders
the reading; every chunk read is judged by the pruning model, and a chunk left unread
is named in the result with the call that reads it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

__all__ = ["focus_terms", "reading_order"]

_WORD = re.compile(r"[a-z0-9][a-z0-9_.-]*[a-z0-9]|[a-z0-9]", re.IGNORECASE)
# Words that say nothing about where to look (questions and focus phrases are full of them).
_STOPWORD_TEXT = """
    a about above after all also an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further
    had has have having here how i if in into is it its just may me more most my no nor not
    now of off on once only or other our out over own same should so some such than that
    the their them then there these they this those through to too under until up very
    was we were what when where which while who whom why will with would you your
    line lines show shows find tell give get file files output part parts relevant report
    reports look looking please kept keep only whole
"""
_STOPWORDS = frozenset(_STOPWORD_TEXT.split())


def focus_terms(text: str) -> list[str]:
    """The words of ``text`` worth looking for: lowercased, without stopwords, each once."""
    words = (w.lower().strip("._-") for w in _WORD.findall(text))
    return list(dict.fromkeys(w for w in words if len(w) > 2 and w not in _STOPWORDS))


def reading_order(chunks: Sequence[str], terms: Sequence[str]) -> list[int]:
    """Indices of ``chunks`` in the order to read them: best score first, then position.

    The score of a chunk is the sum, over the terms it contains, of the term's rarity
    across the chunks (``log((n + 1) / (df + 0.5))``) times ``1 + log(count)``. With no
    terms, or no term anywhere, the order is the chunks' own.
    """
    lowered = [chunk.lower() for chunk in chunks]
    n = len(lowered)
    counts = [[text.count(term) for term in terms] for text in lowered]
    scores = [0.0] * n
    for t in range(len(terms)):
        df = sum(1 for row in counts if row[t])
        if df == 0:
            continue
        rarity = math.log((n + 1) / (df + 0.5))
        for i, row in enumerate(counts):
            if row[t]:
                scores[i] += rarity * (1.0 + math.log(row[t]))
    return sorted(range(n), key=lambda i: (-scores[i], i))
