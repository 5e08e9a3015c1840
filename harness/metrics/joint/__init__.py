"""The joint score J: style success x content similarity x fluency, per sentence."""
