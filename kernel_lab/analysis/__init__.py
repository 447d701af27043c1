"""Analysis of profiles: the conductor (ranked bottlenecks) and its rules."""
