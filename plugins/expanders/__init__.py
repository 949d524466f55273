"""spanaug plugin expanders (registrations only; code in sibling modules)."""
