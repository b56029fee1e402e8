"""Memory: the short-term context builder, embedders, and the long-term memory stream."""
