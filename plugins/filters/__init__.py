"""spanaug plugin filters (registrations only; code in sibling modules)."""
