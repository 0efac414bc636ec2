"""One policy per module; each exposes POLICY and the pure check it wraps."""
