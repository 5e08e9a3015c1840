"""Style lexicons and text modification (removal, masking); built out by the content-preservation work."""
