"""Batch grading: find submissions, grade them in parallel on any Executor, write every output."""
