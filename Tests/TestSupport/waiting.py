"""Waiting in the Python helpers of the shell suites (Tests/deploy, reliability, shards, bench):
the counterpart of wait_for and window in processes.sh. Import with
    sys.dont_write_bytecode = True  # no __pycache__ in Tests/TestSupport, a Swift target
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "TestSupport"))
    from waiting import poll, window
"""
import time

STEP = 0.1  # no single sleep is longer


def poll(attempt, seconds):
    """Calls attempt() every 0.1 s until it returns something true or `seconds` pass on the
    monotonic clock; returns its last result either way (the caller checks it and says what
    failed). The way these scripts wait for an event: never a fixed sleep."""
    deadline = time.monotonic() + seconds
    while True:
        result = attempt()
        if result or time.monotonic() >= deadline:
            return result
        time.sleep(min(STEP, max(0.0, deadline - time.monotonic())))


def window(seconds, alive=lambda: True):
    """Lets `seconds` pass on the monotonic clock in steps of at most 0.1 s; returns False as soon
    as alive() is false. For a deliberate measurement window or load rhythm, never to wait for an
    event (use poll)."""
    end = time.monotonic() + seconds
    while True:
        if not alive():
            return False
        left = end - time.monotonic()
        if left <= 0:
            return True
        time.sleep(min(STEP, left))
