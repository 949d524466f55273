"""spanaug plugin conll_srl (registrations only; code in sibling modules)."""
