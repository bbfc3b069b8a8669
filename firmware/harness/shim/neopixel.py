"""A stand-in for ``neopixel``: each ``write()`` reports every pixel to the test."""

import board_shim


class NeoPixel:
    def __init__(self, pin, n, bpp=3, timing=1):
        self.pin = pin
        self.n = n
        self.bpp = bpp
        self._pixels = [(0,) * bpp for _ in range(n)]

    def __len__(self):
        return self.n

    def __setitem__(self, index, value):
        self._pixels[index] = tuple(value)

    def __getitem__(self, index):
        return self._pixels[index]

    def fill(self, value):
        for i in range(self.n):
            self._pixels[i] = tuple(value)

    def write(self):
        board_shim.report(pixels=[list(p) for p in self._pixels])
