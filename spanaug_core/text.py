"""Plain-text helpers shared by every component: tokenize, detokenize, find a phrase.

Decoders produce text, aligners and datasets work on tokens; one tokenizer and one
detokenizer keep both views consistent across the project. They are deliberately simple
(Penn-Treebank-like splitting of punctuation and English clitics) and reversible enough
that ``tokenize(detokenize(tokens)) == tokens`` holds for ordinary sentences.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

_TOKEN = re.compile(
    r"""
    (?:[A-Za-z]\.){2,}                    # abbreviations such as U.S.
  | \d+(?:[.,:]\d+)*%?                    # numbers, times, percentages
  | n't\b | N'T\b                         # negative clitic
  | '(?:s|re|ve|ll|d|m|S|RE|VE|LL|D|M)\b  # other clitics
  | \w+?(?=n't\b|N'T\b)                   # the word before "n't" (do|n't)
  | \w+(?:-\w+|'(?!(?:s|re|ve|ll|d|m)\b)\w+)*  # words, hyphenated words, O'Neil
  | \.\.\. | -- | ``|''                   # multi-character punctuation
  | \S                                    # anything else, one character
    """,
    re.VERBOSE,
)

# Tokens written without a space before / after them.
_NO_SPACE_BEFORE = {".", ",", ";", ":", "!", "?", "%", ")", "]", "}", "...", "''", "n't", "N'T"}
_NO_SPACE_AFTER = {"(", "[", "{", "$", "``", "#"}
_CLITIC = re.compile(r"^'(?:s|re|ve|ll|d|m)$", re.IGNORECASE)


def tokenize(text: str) -> list[str]:
    """Split ``text`` into word and punctuation tokens."""
    return _TOKEN.findall(text)


def detokenize(tokens: Sequence[str]) -> str:
    """Join tokens into a sentence with conventional English spacing."""
    out: list[str] = []
    prev: str | None = None
    open_quote = False
    for tok in tokens:
        space = prev is not None
        if tok in _NO_SPACE_BEFORE or _CLITIC.match(tok):
            space = False
        elif tok == '"':
            # Straight quotes alternate between opening and closing.
            space = space and not open_quote
            open_quote = not open_quote
        elif prev in _NO_SPACE_AFTER or (prev == '"' and open_quote):
            space = False
        out.append((" " if space else "") + tok)
        prev = tok
    return "".join(out)


def normalize(phrase: str, case_sensitive: bool = True) -> tuple[str, ...]:
    """A phrase as a token tuple, lower-cased unless ``case_sensitive``."""
    toks = tokenize(phrase)
    return tuple(toks if case_sensitive else (t.lower() for t in toks))


def find_all(tokens: Sequence[str], phrase: Sequence[str], case_sensitive: bool = True) -> Iterator[tuple[int, int]]:
    """Every ``(start, end)`` where ``phrase`` occurs as whole tokens in ``tokens``, left to right."""
    if not phrase:
        return
    hay = list(tokens) if case_sensitive else [t.lower() for t in tokens]
    needle = list(phrase) if case_sensitive else [t.lower() for t in phrase]
    n = len(needle)
    for i in range(len(hay) - n + 1):
        if hay[i : i + n] == needle:
            yield i, i + n


def find_phrase(tokens: Sequence[str], phrase: Sequence[str], case_sensitive: bool = True) -> tuple[int, int] | None:
    """The first ``(start, end)`` where ``phrase`` occurs as whole tokens in ``tokens``."""
    return next(find_all(tokens, phrase, case_sensitive), None)


def contains_phrase(text: str, phrase: str, case_sensitive: bool = True) -> bool:
    """Whether ``phrase`` occurs in ``text`` on word boundaries (token level)."""
    return find_phrase(normalize(text, case_sensitive), normalize(phrase, case_sensitive)) is not None
