"""Plain-text helpers shared by every component: tokenize, detokenize, find a phrase.

Decoders produce text, aligners and datasets work on tokens; one tokenizer and one
detokenizer keep both views consistent across the project. They are deliberately simple
(Penn-Treebank-like splitting of punctuation and English clitics; hyphens split off, as
CoNLL-2003, OntoNotes and UD do) and reversible enough that
``tokenize(detokenize(tokens)) == tokens`` holds for ordinary sentences.
``tokenize_with_offsets`` keeps each token's character offsets and can split tokens at
given offsets, so character-offset annotations (FrameNet, brat) map onto whole tokens.
``placeholders`` reads the fields of a user's prompt template (``{avoid}``, ``{source}``).
``retokenize`` joins back, in a paraphrase's tokens, a source's tokens that the tokenizer
splits ("M." read from UD), so the paraphrase is tokenized as its source was.
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

_TOKEN = re.compile(
    r"""
    (?:[A-Za-z]\.){2,}                    # abbreviations such as U.S.
  | \d+(?:[.,:]\d+)*%?                    # numbers, times, percentages
  | n't\b | N'T\b                         # negative clitic
  | '(?:s|re|ve|ll|d|m|S|RE|VE|LL|D|M)\b  # other clitics
  | \w+?(?=n't\b|N'T\b)                   # the word before "n't" (do|n't)
  | \w+(?:'(?!(?:s|re|ve|ll|d|m)\b)\w+)*  # words, O'Neil (a hyphen is a token: wheel - chair)
  | \.\.\. | -- | ``|''                   # multi-character punctuation
  | \S                                    # anything else, one character
    """,
    re.VERBOSE,
)

# Tokens written without a space before / after them.
_NO_SPACE_BEFORE = {".", ",", ";", ":", "!", "?", "%", ")", "]", "}", "...", "''", "n't", "N'T"}
_NO_SPACE_AFTER = {"(", "[", "{", "$", "``", "#"}
_CLITIC = re.compile(r"^'(?:s|re|ve|ll|d|m)$", re.IGNORECASE)


# Closed-class English words: what a phrase's content words are not.
FUNCTION_WORDS = frozenset(
    """a an the this that these those some any no every each all both either neither
    i me my mine we us our ours you your yours he him his she her hers it its they them their theirs
    who whom whose which what there here
    of in on at by for with from to into onto upon about over under between among through during
    before after above below against without within along across around behind beyond off out up down
    and or but nor so yet if then than as because while though although whether
    be am is are was were been being have has had having do does did doing
    will would shall should can could may might must 's 're 've 'll 'd 'm n't not
    very too also just only even still""".split()
)


def is_content_word(token: str) -> bool:
    """Whether a token is a content word: it has a letter and is not a closed-class word."""
    return any(ch.isalpha() for ch in token) and token.lower() not in FUNCTION_WORDS


def tokenize(text: str) -> list[str]:
    """Split ``text`` into word and punctuation tokens."""
    return _TOKEN.findall(text)


@dataclass(frozen=True)
class Tokenized:
    """Tokens and their character offsets ``[start, end)`` in the text they came from."""

    tokens: tuple[str, ...]
    offsets: tuple[tuple[int, int], ...]

    def token_span(self, start: int, end: int) -> tuple[int, int] | None:
        """The tokens ``[first, last + 1)`` inside characters ``[start, end)``, or None if none is.

        An edge on whitespace or inside a token snaps inward to the whole tokens covered.
        """
        first = next((i for i, (s, _) in enumerate(self.offsets) if s >= start), None)
        last = next((i for i in range(len(self.offsets) - 1, -1, -1) if self.offsets[i][1] <= end), None)
        if first is None or last is None or last < first:
            return None
        return first, last + 1


def tokenize_with_offsets(text: str, boundaries: Iterable[int] = ()) -> Tokenized:
    """Tokens of ``text`` with their character offsets, also split at every offset in ``boundaries``.

    Pass the start and end offsets of annotated character spans as ``boundaries`` and no
    span edge falls inside a token.
    """
    cuts = sorted(set(boundaries))
    tokens: list[str] = []
    offsets: list[tuple[int, int]] = []
    position = 0
    for token in tokenize(text):
        start = text.index(token, position)
        end = start + len(token)
        position = end
        edges = [start, *(c for c in cuts if start < c < end), end]
        for a, b in zip(edges, edges[1:], strict=False):
            tokens.append(text[a:b])
            offsets.append((a, b))
    return Tokenized(tuple(tokens), tuple(offsets))


def retokenize(tokens: Sequence[str], like: Sequence[str]) -> tuple[str, ...]:
    """``tokens`` with every run that spells one token of ``like`` as ``tokenize`` splits it
    joined back into that token: ``("Jennifer", "M", ".")`` like ``("Jennifer", "M.")`` gives
    ``("Jennifer", "M.")``. A corpus keeps abbreviations and some hyphenated words whole
    ("M.", CoNLL-2003's "F-16"); a paraphrase of its sentence, tokenized from the decoder's
    text, then keeps them whole too.
    """
    whole: dict[tuple[str, ...], str] = {}
    for token in like:
        pieces = tuple(tokenize(token))
        if len(pieces) > 1:
            whole.setdefault(pieces, token)
    if not whole:
        return tuple(tokens)
    longest = max(map(len, whole))
    out: list[str] = []
    i = 0
    while i < len(tokens):
        for n in range(min(longest, len(tokens) - i), 1, -1):
            joined = whole.get(tuple(tokens[i : i + n]))
            if joined is not None:
                out.append(joined)
                i += n
                break
        else:
            out.append(tokens[i])
            i += 1
    return tuple(out)


def _joins_words(tokens: Sequence[str], i: int) -> bool:
    """Whether ``tokens[i]`` is a hyphen between two words (``wheel - chair``), written without spaces.

    The tokenizer splits ``wheel-chair`` into three tokens, so joining them keeps the round
    trip; a spaced dash in a headline (``SOCCER - JAPAN``) is written ``SOCCER-JAPAN``, which
    tokenizes back to the same tokens.
    """
    return (
        tokens[i] == "-"
        and 0 < i < len(tokens) - 1
        and tokens[i - 1][-1:].isalnum()
        and tokens[i + 1][:1].isalnum()
    )


def detokenize(tokens: Sequence[str]) -> str:
    """Join tokens into a sentence with conventional English spacing (``wheel - chair`` -> ``wheel-chair``)."""
    return "".join(_spaced(tokens))


def token_offsets(tokens: Sequence[str]) -> list[tuple[int, int]]:
    """Where each token sits in ``detokenize(tokens)``: ``(start, end)`` character offsets.

    Needed because a token's leading space can depend on the token after it (a hyphen
    joins two words), so the text of a prefix of the tokens is not always a prefix of the
    sentence's text.
    """
    offsets, at = [], 0
    for piece, tok in zip(_spaced(tokens), tokens, strict=True):
        start = at + len(piece) - len(tok)
        offsets.append((start, start + len(tok)))
        at += len(piece)
    return offsets


def _spaced(tokens: Sequence[str]) -> list[str]:
    """Each token with the space that goes before it in the sentence, if any."""
    out: list[str] = []
    prev: str | None = None
    open_quote = False
    for i, tok in enumerate(tokens):
        space = prev is not None
        if _joins_words(tokens, i) or (i > 0 and _joins_words(tokens, i - 1)):
            space = False
        elif tok in _NO_SPACE_BEFORE or _CLITIC.match(tok):
            space = False
        elif tok == '"':
            # Straight quotes alternate between opening and closing.
            space = space and not open_quote
            open_quote = not open_quote
        elif prev in _NO_SPACE_AFTER or (prev == '"' and open_quote):
            space = False
        out.append((" " if space else "") + tok)
        prev = tok
    return out


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


def overlaps(a: tuple[int, int], b: tuple[int, int]) -> bool:
    """Whether the token spans ``[a0, a1)`` and ``[b0, b1)`` share a token."""
    return a[0] < b[1] and b[0] < a[1]


def find_copy(tokens: Sequence[str], phrase: Sequence[str], taken: Sequence[tuple[int, int]], unique: bool) -> tuple[int, int] | None:
    """Where ``phrase`` occurs word for word in ``tokens`` clear of ``taken``: in its own case
    if it does, else case folded; the first such place, or with ``unique`` the only one."""
    for fold in (False, True):
        places = [m for m in find_all(tokens, phrase, case_sensitive=not fold) if not any(overlaps(m, t) for t in taken)]
        if places:
            return places[0] if not unique or len(places) == 1 else None
    return None


def contains_phrase(text: str, phrase: str, case_sensitive: bool = True) -> bool:
    """Whether ``phrase`` occurs in ``text`` on word boundaries (token level)."""
    return find_phrase(normalize(text, case_sensitive), normalize(phrase, case_sensitive)) is not None


def placeholders(template: str) -> set[str]:
    """The named fields of a ``str.format`` template; ValueError, saying how to write a
    literal brace, when it is no valid template (an unmatched "{")."""
    try:
        return {name for _, name, _, _ in string.Formatter().parse(template) if name is not None}
    except ValueError as exc:
        raise ValueError(f"not a format string ({exc}); write a literal brace as {{{{ or }}}}") from None
