"""dfir's version: it salts every fingerprint and cache key, so a new version never reuses old output."""
VERSION = "0.1.0"
