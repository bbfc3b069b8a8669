"""The training scripts of the camera's shipped weights, run from the repository's root; not
installed (the wheel holds only what they write, ``hardware/camera/reader/weights.json`` says
which command wrote each file):

- ``python3 -m training.classifier``: the corner classifiers, ``model.npz``
  (:mod:`hardware.camera.reader.classify`);
- ``python3 -m training.locator``: the locator network, ``locator.onnx``
  (:mod:`hardware.camera.reader.locate`; needs PyTorch, the ``train`` extra).

Training imports ``hardware``; nothing installed imports ``training``."""
