"""spanaug plugin jsonl (registrations only; code in sibling modules)."""
