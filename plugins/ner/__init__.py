"""spanaug plugin ner (registrations only; code in sibling modules)."""
