"""Mutation analysis of an assignment's checks and self-checks (``seqgrade audit``): mutants of the
solution's student lines are graded and self-checked like submissions, and the survivors, the double
charges and the self-checks' share of the grader's kills are reported per exercise."""
