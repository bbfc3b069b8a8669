"""The camera over the pile as a card source. Two rooms and two files:

- :mod:`hardware.camera.reader`: what reads a card at the table (frame sources, the locator
  network and the edge finder, the corner index and its classifiers, the pips, enrolled decks,
  the recogniser, lays from frames, enrollment), with the weights it ships (``locator.onnx``,
  ``model.npz``, listed in ``weights.json``);
- :mod:`hardware.camera.synthetic`: card artwork, rendered scenes, the virtual camera and the
  recogniser's evaluation on them (the full-stack simulation films with it);
- :mod:`hardware.camera.config`, the ``[camera]`` section (standard library only), and
  :mod:`hardware.camera.edge`, the service edge.

numpy and OpenCV come from the ``camera`` extra; nothing here is imported by the rest of
``hardware``. The training scripts that write the weights are not installed: ``training/`` at the
repository's root (``python3 -m training.classifier``, ``python3 -m training.locator``)."""
