"""Statistics every study shares: descriptive statistics, the bootstrap, variance components of
iterations, runs and sessions, and the differences between sessions. Pure functions of tables."""
