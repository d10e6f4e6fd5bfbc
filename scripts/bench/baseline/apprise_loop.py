"""Baseline: Debian's Apprise delivering N notifications to json://127.0.0.1:<port>/, one notify() after another.

Usage: apprise_loop.py <port> <count>. Prints the wall time of the first send and of the end, as JSON.
"""
import json
import sys
import time

import apprise

port, count = int(sys.argv[1]), int(sys.argv[2])
a = apprise.Apprise()
a.add(f"json://127.0.0.1:{port}/")
failed = 0
start = time.time()
for n in range(count):
    if not a.notify(title="New commits in octo-org/herald-bench:main", body=f"Pushed by monalisa\nCommits: 1\n- benchid{n}x Tune the relay hot path"):
        failed += 1
end = time.time()
print(json.dumps({"start": start * 1000, "end": end * 1000, "failed": failed}))
