"""Job conditions, merged by Kubeflow's rules (``pkg/util/status.go``).

Part of the pure core, used by ``plan.py``:

* once ``Failed`` is true, nothing changes;
* setting a condition with the same status and reason is a no-op (timestamps kept);
* same status, new reason: ``lastTransitionTime`` is kept, ``lastUpdateTime`` moves;
* ``Running`` and ``Restarting`` replace each other;
* ``Succeeded``/``Failed`` flip ``Running`` to False.
"""
from __future__ import annotations

import datetime
from typing import Any

from .api import ConditionType


def timestamp(now: datetime.datetime) -> str:
    """RFC 3339 in UTC with second precision, as the API server writes it."""
    return now.astimezone(datetime.timezone.utc).strftime('%Y-%m-%dT%H:%M:%SZ')


def parse_timestamp(value: str | None) -> datetime.datetime | None:
    if not value:
        return None
    try:
        parsed = datetime.datetime.fromisoformat(value.replace('Z', '+00:00'))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=datetime.timezone.utc)


def get_condition(conditions: list[dict[str, Any]], ctype: ConditionType) -> dict[str, Any] | None:
    for cond in conditions:
        if cond.get('type') == ctype.value:
            return cond
    return None


def is_true(conditions: list[dict[str, Any]], ctype: ConditionType) -> bool:
    cond = get_condition(conditions, ctype)
    return cond is not None and cond.get('status') == 'True'


def is_finished(conditions: list[dict[str, Any]]) -> bool:
    return is_true(conditions, ConditionType.SUCCEEDED) or is_true(conditions, ConditionType.FAILED)


def set_condition(conditions: list[dict[str, Any]], ctype: ConditionType, status: bool, reason: str,
                  message: str, now: datetime.datetime) -> list[dict[str, Any]]:
    """Return the new condition list (the input is not modified)."""
    if is_true(conditions, ConditionType.FAILED):
        return conditions
    status_str = 'True' if status else 'False'
    current = get_condition(conditions, ctype)
    if current is not None and current.get('status') == status_str and current.get('reason') == reason:
        return conditions
    stamp = timestamp(now)
    new = {'type': ctype.value, 'status': status_str, 'reason': reason, 'message': message,
           'lastUpdateTime': stamp, 'lastTransitionTime': stamp}
    if current is not None and current.get('status') == status_str:
        new['lastTransitionTime'] = current.get('lastTransitionTime', stamp)
    result = []
    for cond in conditions:
        other = cond.get('type')
        if other == ctype.value:
            continue
        if {ctype.value, other} == {ConditionType.RUNNING.value, ConditionType.RESTARTING.value}:
            continue
        if ctype in (ConditionType.SUCCEEDED, ConditionType.FAILED) and other == ConditionType.RUNNING.value \
                and cond.get('status') == 'True':
            cond = {**cond, 'status': 'False', 'lastUpdateTime': stamp, 'lastTransitionTime': stamp}
        result.append(cond)
    result.append(new)
    return result
