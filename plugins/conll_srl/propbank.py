"""PropBank frame files: roleset and role descriptions attached to SRL spans on request,
and each roleset's words and links for the ``propbank`` lexicon.

A frames folder holds one XML file per predicate lemma (``come.xml`` with rolesets
``come.01``...). For descriptions, files are parsed lazily, on the first roleset asked of
them, so pointing the reader at the 7,566-file release costs only what a dataset uses.
Links (a roleset's FrameNet frames and VerbNet classes) are read from every file at once,
since finding the rolesets that share a link means reading them all (about a second).
"""

from __future__ import annotations

import logging
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from spanaug_core.errors import DataError

log = logging.getLogger(__name__)


class FrameFiles:
    """Roleset descriptions from a PropBank ``frames/`` folder."""

    def __init__(self, folder: Path) -> None:
        if (folder / "frames").is_dir():
            folder = folder / "frames"
        if not folder.is_dir():
            raise DataError("expected a PropBank frames folder (one <lemma>.xml per predicate)", path=folder)
        self.folder = folder
        self.malformed = 0
        self._load = lru_cache(maxsize=None)(self._parse)

    def _parse(self, lemma: str) -> dict[str, Roleset]:
        path = self.folder / f"{lemma}.xml"
        rolesets: dict[str, Roleset] = {}
        if not path.is_file():
            return rolesets
        # Attributes come with the start events and an alias's text with its end, so the
        # rolesets before a malformed spot survive it (the release's check.xml has a
        # mismatched tag in an example).
        current: Roleset | None = None
        try:
            for event, element in ET.iterparse(path, events=("start", "end")):
                if event == "start" and element.tag == "roleset":
                    current = rolesets[element.get("id", "")] = Roleset(element.get("name", ""))
                elif current is None:
                    continue
                elif event == "start" and element.tag == "role":
                    current.roles[f"ARG{element.get('n', '').upper()}"] = element.get("descr", "")
                elif event == "start" and element.tag == "lexlink" and element.get("class"):
                    current.links.add(f"{element.get('resource', '')}:{element.get('class')}")
                elif event == "end" and element.tag == "alias" and element.text:
                    current.words.add((" ".join(element.text.replace("_", " ").split()).lower(), element.get("pos", "")))
        except ET.ParseError as exc:
            self.malformed += 1
            log.warning("%s: malformed frame file, rolesets after %s not read", path, exc.position)
        return rolesets

    def lookup(self, roleset: str) -> tuple[str, dict[str, str]] | None:
        """``(name, {"ARG0": descr, ...})`` of a roleset id such as ``come.03``, or None."""
        lemma = roleset.rsplit(".", 1)[0]
        # Phrasal rolesets (come_up.11) live in the file of their head verb (come.xml).
        for candidate in dict.fromkeys((lemma, lemma.split("_")[0], lemma.split("-")[0])):
            found = self._load(candidate).get(roleset)
            if found is not None:
                return found.name, found.roles
        return None

    def links(self) -> dict[str, Roleset]:
        """Every roleset of the folder, by id (each file read once, as ``lookup`` reads it)."""
        return {roleset_id: roleset for path in sorted(self.folder.glob("*.xml")) for roleset_id, roleset in self._load(path.stem).items()}


@dataclass
class Roleset:
    """A roleset as its frame file describes it: its name, its roles (``ARG0`` -> description),
    its words (alias, PropBank part of speech: v, n, j...; "post" is a v and an n of post.01)
    and what it links to (``FrameNet:Taking``, ``VerbNet:get-13.5.1``)."""

    name: str
    roles: dict[str, str] = field(default_factory=dict)
    words: set[tuple[str, str]] = field(default_factory=set)
    links: set[str] = field(default_factory=set)
