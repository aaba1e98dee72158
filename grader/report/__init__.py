"""Reports for people: a terminal summary, a self-contained HTML feedback page per notebook."""
