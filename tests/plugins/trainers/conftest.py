"""Tiny NER and SRL fixtures written in words the tiny BERT's vocabulary knows."""

from __future__ import annotations

from pathlib import Path

import pytest

# CoNLL-2003 layout (token, POS, chunk, tag), IOB2: people, vehicles and animals.
NER_ROWS = [
    [("the", "O"), ("man", "B-PER"), ("saw", "O"), ("the", "O"), ("red", "B-VEH"), ("car", "I-VEH"), (".", "O")],
    [("she", "B-PER"), ("bought", "O"), ("a", "O"), ("blue", "B-VEH"), ("auto", "I-VEH"), (".", "O")],
    [("the", "O"), ("cat", "B-ANI"), ("sat", "O"), ("on", "O"), ("the", "O"), ("mat", "O"), (".", "O")],
    [("a", "O"), ("dog", "B-ANI"), ("lay", "O"), ("on", "O"), ("the", "O"), ("rug", "O"), (".", "O")],
    [("he", "B-PER"), ("watched", "O"), ("the", "O"), ("big", "O"), ("dog", "B-ANI"), (".", "O")],
    [("the", "O"), ("woman", "B-PER"), ("purchased", "O"), ("a", "O"), ("small", "B-VEH"), ("car", "I-VEH"), (".", "O")],
]

# CoNLL-2005 layout (word, predicate lemma, one bracketed column per predicate).
SRL_TEXT = """she    -       (A0*)     (A0*)
saw    see     (V*)      *
the    -       (A1*      *
man    -       *)        *
and    -       *         *
bought buy     *         (V*)
a      -       *         (A1*
car    -       *         *)
.      -       *         *

the    -       (A0*
dog    -       *)
watched watch  (V*)
the    -       (A1*
cat    -       *)
.      -       *

he     -       (A0*)
bought buy     (V*)
the    -       (A1*
red    -       *
auto   -       *)
.      -       *

"""


@pytest.fixture(scope="session")
def ner_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The six NER sentences as a CoNLL-2003 file (with a -DOCSTART- line)."""
    blocks = ["-DOCSTART- -X- -X- O\n"]
    blocks += ["".join(f"{w} X X {t}\n" for w, t in rows) for rows in NER_ROWS]
    path = tmp_path_factory.mktemp("ner") / "tiny.conll"
    path.write_text("\n".join(blocks) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def srl_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three sentences, four predicates, as a CoNLL-2005 file."""
    path = tmp_path_factory.mktemp("srl") / "tiny.props"
    path.write_text(SRL_TEXT, encoding="utf-8")
    return path
