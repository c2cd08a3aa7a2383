"""The checks of the Python helpers of the shell suites (Tests/deploy, Tests/shards): each prints one
line, `ok` or `FAIL` and what was checked, and a failure is kept for the summary the script prints
before it exits 1. Import as waiting.py says, then
    import checks
    from checks import check
"""

failures = []
passes = 0


def check(ok, what):
    """Prints the outcome of one check and keeps a failure; returns `ok`, so a caller can skip what
    depends on it."""
    global passes
    print(f"  {'ok  ' if ok else 'FAIL'} {what}", flush=True)
    if ok:
        passes += 1
    else:
        failures.append(what)
    return ok
