"""What the tests' helper processes (servers, emulators, a KDC) share: a free loopback port,
waiting for a process to listen on it, and stopping it."""

import socket
import subprocess
import time


def free_port():
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port, seconds):
    """Whether something accepts connections on 127.0.0.1:`port` within `seconds`."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return True
        except OSError:
            time.sleep(0.1)
    return False


def stop_process(proc, seconds=15):
    """Ends `proc`: asked first, killed if it does not end within `seconds`."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(seconds)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
