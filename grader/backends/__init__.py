"""Places where student code can run: the sandbox (default) and in-process (nbgrader hook, lower bound)."""
