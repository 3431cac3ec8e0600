"""Imported as a preload: starts a thread at import, which makes forking unsafe."""

import threading
import time

THREAD = threading.Thread(target=time.sleep, args=(600,), daemon=True)
THREAD.start()
