"""What reads a card at the table, in the order of a read (:mod:`.recognise` puts the steps
together):

- :mod:`.sources`: frames from a camera, a video or still images, with capture times;
- :mod:`.locate`: where the locator network sees the top card (``locator.onnx``);
- the edge finder, when the locator's places do not read: :mod:`.lines` (straight edges),
  :mod:`.edges` (a quad against the gradient around it), :mod:`.rectangles` (cards of four
  lines, or found from one corner), :mod:`.regions` (cards of paper regions) and :mod:`.find`
  (the whole cards of a frame, and where to look further);
- :mod:`.warp`: the card upright;
- :mod:`.index` and :mod:`.classify`: the corner indices and the classifiers that name them
  (``model.npz``);
- :mod:`.pips`: a number card's pips, read apart from its index;
- :mod:`.templates`: an enrolled deck's templates;
- :mod:`.recognise`: the decision (:class:`~.recognise.Recogniser`, :class:`~.recognise.Read`);
- :mod:`.lays`: lays from a stream of reads; :mod:`.enroll`: enrollment of a deck.

``weights.json`` lists the shipped weights: their checksums, sizes and the commands that wrote
them (:mod:`.weights` checks them)."""
