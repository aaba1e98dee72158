"""Late policies the late-policy tests share, and reading one."""

from grader.batch.late import LatePolicy, policy_from_dict

DUE = "2025-10-20T23:59:00+02:00"
PER_DAY = {"version": 1, "due": DUE, "grace_minutes": 15, "penalty": {"per_day": 10, "floor": 50}}
WINDOWED = {
    "version": 1,
    "due": "2025-10-20T23:59",
    "timezone": "Europe/Berlin",
    "penalty": {"windows": [{"hours": 24, "credit": 80}, {"hours": 72, "credit": 50}], "then": 0},
}


def _policy(data) -> LatePolicy:
    return policy_from_dict(data)[0]
