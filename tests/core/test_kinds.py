"""One table of component kinds: each row's hook, protocol and run config section follow from it."""

from __future__ import annotations

import pytest

from spanaug_core import hookspecs
from spanaug_core.config import RunConfig
from spanaug_core.errors import SpanaugError
from spanaug_core.kinds import KINDS, SECTIONS, kind_named


def test_every_kind_has_its_hook_and_every_hook_a_kind() -> None:
    hooks = {name for name in dir(hookspecs) if name.startswith("register_")}
    assert hooks == {kind.hook for kind in KINDS} | {"register_models", "register_commands"}
    decoders = getattr(hookspecs, "register_decoders")
    assert decoders.__name__ == "register_decoders" and "constrained decoders" in (decoders.__doc__ or "")


def test_every_section_is_a_setting_of_the_run_config_with_the_rows_default() -> None:
    config = RunConfig()
    for _, section in SECTIONS:
        value = getattr(config, section.key)
        if section.many:
            assert value == []
        elif section.default is None:
            assert value is None
        else:
            assert value.name == section.default
    assert [section.key for _, section in SECTIONS] == ["dataset", "expander", "decoder", "aligner", "filters", "lexicon", "engine"]
    # A kind that is not part of a run (a trainer) has no section.
    assert "trainer" not in RunConfig.model_fields and "trainers" not in RunConfig.model_fields


def test_a_kind_is_named_in_the_singular_or_the_plural() -> None:
    assert kind_named("decoders") is kind_named("decoder")
    with pytest.raises(SpanaugError, match="unknown component kind 'paraphraser'; kinds: dataset, expander, decoder"):
        kind_named("paraphraser")


def test_the_fingerprint_keeps_only_the_name_of_a_section_not_resumed() -> None:
    config = RunConfig(engine={"name": "local"}, lexicon={"name": "table", "words": ["a"]})
    found = config.fingerprint()
    assert found["engine"] == "local" and found["lexicon"] == {"name": "table", "words": ["a"]}
