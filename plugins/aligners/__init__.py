"""spanaug plugin aligners (registrations only; code in sibling modules)."""
