"""Leaves a detached grandchild (marker in its argv) running, then sleeps."""

import os
import subprocess
import sys
import time

marker = sys.argv[1]
subprocess.Popen(
    [sys.executable, "-c", "import time; time.sleep(300)", marker],
    start_new_session=True,
    stdout=subprocess.DEVNULL,
    stderr=subprocess.DEVNULL,
)
if os.fork() == 0:  # and a forked child in our own group
    os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(300)", marker])
print("CHILDREN-STARTED", flush=True)
time.sleep(300)
