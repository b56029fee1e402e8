"""autonoma's web server (FastAPI): the town's viewer today (docs/sim.md)."""
