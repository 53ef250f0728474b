"""Renderers: they only format an analysed run (engine.RunResult); they never measure or decide."""
