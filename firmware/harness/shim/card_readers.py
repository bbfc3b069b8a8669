"""The card reader driver the firmware looks for (``card_readers.Readers``), here fed by the
test: a tag sent on the control channel arrives once, at the reader's next poll."""

import board_shim


class Readers:
    def __init__(self, count=2):
        self.count = count
        self.enabled = [True] * count

    def poll(self):
        board_shim.service()
        if not board_shim.reads:
            return []
        out = board_shim.reads[:]
        del board_shim.reads[:]
        for reader, tag in out:
            board_shim.report(read=reader, tag=tag.hex())
        return out
