"""The firmware bridge: the table board (card readers, seat buttons, LEDs, buzzer) on a serial
line, and a virtual board that speaks the same protocol.

- ``protocol``: frames (COBS, CRC-16/CCITT-FALSE, sequence numbers) and messages.
- ``reliable``: acknowledgements, retransmission, duplicate filtering.
- ``clock``: board ticks onto the table clock, with an error bound.
- ``link``: the async host link (:class:`~firmware_bridge.link.Link`), the service's entry point.
- ``events``: what the link hands out (``BoardEvent``, ``LinkStatus``, ``LinkHealth``,
  ``BoardError``).
- ``deck``: deck files and ``referee deck enroll``.
- ``emulator``: the virtual board on a pty; ``sim``: host and board in virtual time.
- ``cli``: the ``firmware_bridge`` command (``emulate``, ``monitor``).

The wire protocol is documented in ``docs/protocol.md``.
"""
