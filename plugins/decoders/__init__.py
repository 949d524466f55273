"""spanaug plugin decoders (registrations only; code in sibling modules)."""
