"""autonoma: an autonomous LLM agent system."""

__version__ = "0.1.0"
