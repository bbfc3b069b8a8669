"""The tests' stand-in for a Raspberry Pi's board revision (``/proc/device-tree`` or
``/proc/cpuinfo``), which gpiozero reads to map pin names: a Pi 4 Model B (``c03111``)."""

import gpiozero.pins.local

gpiozero.pins.local.get_pi_revision = lambda: 0xC03111
