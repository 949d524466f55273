"""The shared layer: building blocks that several plugins use, with no registrations.

Layers, each importing only those below it: ``spanaug_core`` (types, protocols, registry,
config, pipeline, run store, CLI), then this package, then the plugins. A plugin imports
the core and this layer, never another plugin; what two plugins both need lives here.

- ``encoder``: word vectors from a frozen Hugging Face encoder (aligners, filters, trainers)
- ``vectors``: those word vectors cached per sentence (taggers, learning curves)
- ``models``: model presets, the offline model cache and its sha256 verification
- ``trained``: which trainer saved a downstream model folder
- ``tagging``: chunk tag schemes (IOB1, IOB2, BIOES) to spans and back, a tag column's options and steps
- ``columns``: reading and writing column files (CoNLL formats)
- ``postag``: part-of-speech tagging with spaCy or NLTK
- ``lemmas``: a word's lemmas (lemminflect), cached
- ``jsonlines``: JSONL files validated line by line
- ``records``: a run's augmented records and manifest, read back
- ``judgments``: human judgments of outputs (the learned filter's training data)

Nothing here is imported by the core, and nothing here registers a component: the
registry only ever sees plugins.
"""
