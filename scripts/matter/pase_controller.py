"""Runs the CHIP Python controller (home-assistant-chip-core) against a Matter device on
IP:port and establishes a PASE session with the setup passcode.

Usage: pase_controller.py HOST PORT PASSCODE STORAGE_DIR [--expect-failure]
Prints 'PASE OK <seconds>' and exits 0 on success; 'PASE FAILED <error>' and exits 1 otherwise
(inverted with --expect-failure). Needs a writable /data (paths compiled into the wheel).
"""
import asyncio
import os
import sys
import time


async def main() -> int:
    host, port, passcode, storage = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    expect_failure = "--expect-failure" in sys.argv
    from chip_controller import start

    controller, stop = start(storage, fabric_id=1)
    started = time.monotonic()
    ok = False
    try:
        await asyncio.wait_for(controller.EstablishPASESessionIP(host, passcode, 1, port), timeout=20)
        print(f"PASE OK {time.monotonic() - started:.3f}", flush=True)
        ok = True
    except Exception as error:  # the controller raises ChipStackError and friends
        print(f"PASE FAILED {error!r}", flush=True)
    finally:
        stop()
    return 0 if ok != expect_failure else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
