"""What every layer shares: budgets, events, and the run store."""
