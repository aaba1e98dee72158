"""The errors the jail's own code raises. The grader's typed errors (grader.errors) derive from the same base,
so that the command line catches both; this module stays here because nothing in the jail may import the
rest of the grader."""

from __future__ import annotations


class SeqgradeError(Exception):
    """Base class of every error seqgrade raises on purpose."""


class ProtocolError(SeqgradeError):
    """A message from the student's process was malformed, too large or not what was asked for."""
