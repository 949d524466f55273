"""The standard split of FrameNet full text: Das & Smith (2011)'s test documents and a dev set.

Frame identification is evaluated on the 23 full-text documents Das & Smith (2011) held
out (used by SEMAFOR, open-sesame and Culkin et al. 2021 §6.3); the 8 dev documents are
the ones open-sesame (Swayamdipta et al. 2017) tunes on. Every other full-text document,
and every LU exemplar sentence, is training data. Names are the ``fulltext/*.xml`` file
stems, the same in FrameNet 1.5 and 1.7.
"""

from __future__ import annotations

from typing import Literal

Split = Literal["all", "train", "dev", "test"]

TEST_DOCUMENTS = frozenset({
    "ANC__110CYL067", "ANC__110CYL069", "ANC__112C-L013", "ANC__IntroHongKong", "ANC__StephanopoulosCrimes",
    "ANC__WhereToHongKong", "KBEval__atm", "KBEval__Brandeis", "KBEval__cycorp", "KBEval__parc", "KBEval__Stanford",
    "KBEval__utd-icsi", "LUCorpus-v0.3__20000410_nyt-NEW", "LUCorpus-v0.3__AFGP-2002-602187-Trans",
    "LUCorpus-v0.3__enron-thread-159550", "LUCorpus-v0.3__IZ-060316-01-Trans-1", "LUCorpus-v0.3__SNO-525",
    "LUCorpus-v0.3__sw2025-ms98-a-trans.ascii-1-NEW", "Miscellaneous__Hound-Ch14", "Miscellaneous__SadatAssassination",
    "NTI__NorthKorea_Introduction", "NTI__Syria_NuclearOverview", "PropBank__AetnaLifeAndCasualty",
})

DEV_DOCUMENTS = frozenset({
    "ANC__110CYL072", "KBEval__MIT", "LUCorpus-v0.3__20000415_apw_eng-NEW", "LUCorpus-v0.3__ENRON-pearson-email-25jul02",
    "Miscellaneous__Hijack", "NTI__NorthKorea_NuclearOverview", "NTI__WMDNews_062606", "PropBank__TicketSplitting",
})


def split_of(document: str, source: str) -> Split:
    """Which split a file belongs to: ``document`` is its stem, ``source`` fulltext or exemplar."""
    if source != "fulltext":
        return "train"
    if document in TEST_DOCUMENTS:
        return "test"
    return "dev" if document in DEV_DOCUMENTS else "train"
