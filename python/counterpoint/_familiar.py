"""The habits of sentence-transformers and of notebooks on counterpoint's objects:
Encoder.similarity (a cosine matrix, as model.similarity gives), encode_query / encode_document
and get_sentence_embedding_dimension, SearchResults.to_pandas and the
table a notebook shows for a SearchResults (_repr_html_). The cosine is the library's one kernel
(counterpoint.cosine); these only shape its input and output."""

import html as _html

# The columns of a hit table, in order: where the hit stands, then its score components.
HIT_COLUMNS = ("query", "rank", "id", "score", "cosine", "sparsity", "bm25", "stage1", "token", "text")
_TABLE_ROWS = 50      # hits a notebook table shows before "... more"
_TABLE_TEXT = 160     # characters of a passage a notebook table shows


def similarity(self, a, b):
    """cos(a[i], b[j]) as a float32 matrix (n, m), as sentence-transformers' model.similarity.

    Arguments:
        a, b: embeddings, shape (d,) or (n, d) (e.g. what encode returned), or texts (a str or a
              list of str), encoded with this encoder first.
    """
    import numpy as np

    def rows(x):
        # An empty list is no texts: (0, dim) rows, a (0, m) matrix, as sentence-transformers gives.
        if isinstance(x, str) or (isinstance(x, (list, tuple)) and all(isinstance(t, str) for t in x)):
            x = self.encode(x)
        return np.atleast_2d(np.asarray(x))

    from . import _core
    return _core.cosine(rows(a), rows(b))


def encode_query(self, texts, **options):
    """sentence-transformers' encode_query: encode(texts, query=True, ...), with the query prefix
    (instruction) the model records, or none."""
    return self.encode(texts, query=True, **options)


def encode_document(self, texts, **options):
    """sentence-transformers' encode_document: encode(texts, query=False, ...), with the document
    prefix the model records, or none."""
    return self.encode(texts, query=False, **options)


def get_sentence_embedding_dimension(self):
    """The width of encode's rows (Encoder.dim), as sentence-transformers names it."""
    return self.dim


def hit_rows(results):
    """One tuple per hit, in HIT_COLUMNS order (rank from 1)."""
    return [(q, rank, h.id, h.score, h.cosine, h.sparsity, h.bm25, h.stage1, h.token, h.text)
            for q, hits in enumerate(results) for rank, h in enumerate(hits, start=1)]


def to_pandas(self):
    """The hits as a pandas DataFrame, one row per hit: query (its position), rank, id, score and
    every score component, text. Needs pandas (an optional dependency)."""
    try:
        import pandas
    except ImportError as error:
        raise ImportError("SearchResults.to_pandas needs pandas, an optional dependency: pip install pandas") \
            from error
    return pandas.DataFrame(hit_rows(self), columns=list(HIT_COLUMNS))


def repr_html(self):
    """A notebook's table of the hits with their score components (score is the final score);
    BM25 and token columns only when a component took part (stage1 is in to_pandas)."""
    rows = hit_rows(self)
    shown = [c for i, c in enumerate(HIT_COLUMNS)
             if c != "stage1" and (c not in ("bm25", "token") or any(row[i] != 0 for row in rows))]
    index = {c: i for i, c in enumerate(HIT_COLUMNS)}

    def cell(column, value):
        if isinstance(value, float):
            return f"{value:.4f}"
        text = str(value)
        if column == "text" and len(text) > _TABLE_TEXT:
            text = text[:_TABLE_TEXT] + "\u2026"
        return _html.escape(text)

    head = "".join(f"<th>{_html.escape(c)}</th>" for c in shown)
    body = "".join("<tr>" + "".join(f"<td>{cell(c, row[index[c]])}</td>" for c in shown) + "</tr>"
                   for row in rows[:_TABLE_ROWS])
    more = f"<p>\u2026 {len(rows) - _TABLE_ROWS} more hits</p>" if len(rows) > _TABLE_ROWS else ""
    caption = f"SearchResults: {len(self)} queries, k={self.k}"
    return f"<table><caption>{_html.escape(caption)}</caption><thead><tr>{head}</tr></thead>" \
           f"<tbody>{body}</tbody></table>{more}"
