"""What the harness's shims share: the pins that have an irq handler, the card reads waiting
for the reader driver, and the control channel to the test (``harness.take``/``report``)."""

import json

import harness

pins = {}
reads = []
_busy = [False]


def report(**fields):
    harness.report(json.dumps(fields))


def service():
    """Apply what the test sent: button edges run their irq handler now, card reads wait for
    the reader driver's next poll."""
    if _busy[0]:
        return
    _busy[0] = True
    try:
        text = harness.take()
        if text:
            for line in text.split("\n"):
                msg = json.loads(line)
                if "gpio" in msg:
                    pin = pins.get(msg["gpio"])
                    if pin is not None:
                        # One edge, or a bouncing contact: levels ``gap_us`` apart, each
                        # stamped so (the spin only keeps the host's clock ahead of it).
                        gap = msg.get("gap_us", 100)
                        for n, level in enumerate(msg.get("levels", [msg.get("level")])):
                            if n:
                                harness.spin_us(gap)
                            harness.edge_at(n, gap)
                            try:
                                pin._drive(level)
                            finally:
                                harness.edge_at(-1, gap)
                elif "tag" in msg:
                    reads.append((msg.get("reader", 0), bytes.fromhex(msg["tag"])))
    finally:
        _busy[0] = False
