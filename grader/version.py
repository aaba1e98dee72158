"""The grader's version. It keys cached batch results, so bump it whenever a verdict could change."""

__version__ = "0.3.1"
RESULT_SCHEMA_VERSION = 4
