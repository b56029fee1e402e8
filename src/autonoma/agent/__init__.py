"""The agent: identity, prompts, the step loop, approval."""
