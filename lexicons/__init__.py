"""Style lexicons and text modification: removal, masking, attribution masking, embedding erasure.
May import: core, classifiers."""
