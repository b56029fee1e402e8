"""Planning: the task graph and the planners that make, grow and revise it."""
