# Python port of the unigram tokenizer that ships with the TF.js Universal Sentence Encoder Lite
# (@energetic-ai/embeddings 0.2.0, lib/tokenizer.ts). It reproduces the reference token ids exactly,
# including its quirks, because the model was only ever fed ids produced by that code:
#   - NFKC, then "\u2581" prepended and every U+0020 space replaced by "\u2581";
#   - a character no vocabulary piece starts with becomes id 0 with score 0, and runs of id 0 merge;
#   - the Viterbi pass treats a best score of exactly 0 as "unset", and ties go to the later candidate;
#   - backtracking steps back by the piece's length in UTF-16 code units, not in code points;
#   - a piece whose score is null in vocab.json (pieces with ':') scores 0, as null + x = x in JS.
import json
import unicodedata
from typing import Dict, List, Sequence, Tuple

SEPARATOR = "\u2581"
RESERVED_SYMBOLS_COUNT = 6
UNKNOWN_ID = 0


def _utf16_length(text: str) -> int:
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


class _TrieNode:
    __slots__ = ("children", "end", "length", "score", "index")

    def __init__(self, length: int) -> None:
        self.children: Dict[str, "_TrieNode"] = {}
        self.end = False
        self.length = length
        self.score = 0.0
        self.index = 0


class UseLiteTokenizer:
    def __init__(self, vocabulary: Sequence[Tuple[str, float]]) -> None:
        if len(vocabulary) <= RESERVED_SYMBOLS_COUNT:
            raise ValueError(f"vocabulary has {len(vocabulary)} entries; expected more than {RESERVED_SYMBOLS_COUNT}")
        self._pieces = [str(entry[0]) for entry in vocabulary]
        self._root = _TrieNode(0)
        for index in range(RESERVED_SYMBOLS_COUNT, len(vocabulary)):
            piece, raw_score = vocabulary[index][0], vocabulary[index][1]
            score = 0.0 if raw_score is None else float(raw_score)
            node = self._root
            for symbol in piece:
                child = node.children.get(symbol)
                if child is None:
                    child = _TrieNode(node.length + 1)
                    node.children[symbol] = child
                node = child
            if piece:
                node.end = True
                node.score = score
                node.index = index

    @classmethod
    def from_file(cls, path: str) -> "UseLiteTokenizer":
        with open(path, "r", encoding="utf-8") as handle:
            vocabulary = json.load(handle)
        if not isinstance(vocabulary, list) or not all(isinstance(e, list) and len(e) == 2 for e in vocabulary):
            raise ValueError(f"{path}: expected a JSON list of [piece, score] pairs")
        return cls(vocabulary)

    @property
    def vocab_size(self) -> int:
        return len(self._pieces)

    def _prefix_matches(self, symbols: List[str], start: int) -> List[Tuple[int, float, int]]:
        matches = []
        node = self._root.children.get(symbols[start])
        position = start
        while node is not None:
            if node.end:
                matches.append((node.length, node.score, node.index))
            position += 1
            node = node.children.get(symbols[position]) if position < len(symbols) else None
        if not matches:
            matches.append((1, 0.0, UNKNOWN_ID))
        return matches

    def encode(self, text: str) -> List[int]:
        normalized = unicodedata.normalize("NFKC", text)
        if normalized:
            normalized = SEPARATOR + normalized.replace(" ", SEPARATOR)
        symbols = list(normalized)
        size = len(symbols)
        # ending_at[end] lists (start, length, score, index) in increasing start order, as the
        # reference iterates its integer-keyed objects.
        ending_at: List[List[Tuple[int, float, int]]] = [[] for _ in range(size + 1)]
        for start in range(size):
            for length, score, index in self._prefix_matches(symbols, start):
                ending_at[start + length].append((length, score, index))
        best = [0.0] * (size + 1)
        words = [0] * (size + 1)
        for end in range(size + 1):
            for length, score, index in sorted(ending_at[end], key=lambda m: end - m[0]):
                total = score + best[end - length]
                if best[end] == 0 or total >= best[end]:
                    best[end] = total
                    words[end] = index
        reversed_ids = []
        position = size
        while position > 0:
            reversed_ids.append(words[position])
            position -= _utf16_length(self._pieces[words[position]])
        merged = []
        previous_unknown = False
        for token_id in reversed_ids:
            if not (previous_unknown and token_id == UNKNOWN_ID):
                merged.append(token_id)
            previous_unknown = token_id == UNKNOWN_ID
        merged.reverse()
        return merged
