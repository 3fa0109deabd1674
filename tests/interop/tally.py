"""A pass/fail count for the interop scripts: check(ok, what) prints a line
for each failure; summary() prints `N passed, M failed` and gives the exit
status (0 only if nothing failed)."""


class Tally:
    def __init__(self):
        self.passed = 0
        self.failed = 0

    def check(self, ok, what):
        if ok:
            self.passed += 1
        else:
            self.failed += 1
            print("FAIL", what)
        return ok

    def summary(self):
        print("%d passed, %d failed" % (self.passed, self.failed))
        return 0 if self.failed == 0 else 1
