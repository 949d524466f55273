"""spanaug plugin framenet (registrations only; code in sibling modules)."""
