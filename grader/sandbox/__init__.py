"""Isolated execution of student notebooks: a pre-loaded zygote forks one jailed process per submission."""
