"""The metrics, one subpackage per aspect: style, content, naturalness, compatibility."""
