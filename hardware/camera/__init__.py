"""The camera over the pile as a card source: card artwork and a virtual camera (``artwork``,
``scene``), the recogniser of the top card (``recognise``, trained by ``train``), lays from a
stream of frames (``lays``), frame sources with capture times (``sources``) and the service edge
(``edge``). numpy and OpenCV come from the ``camera`` extra; nothing here is imported by the
rest of ``hardware``."""
