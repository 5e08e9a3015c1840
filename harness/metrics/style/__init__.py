"""Style: signed and normalised style transfer intensity (EMD), target-style probability and accuracy.
May import: core, metrics, scorecard, failures."""
