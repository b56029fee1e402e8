"""Memory: the short-term context builder (the long-term stream comes with its own issue)."""
