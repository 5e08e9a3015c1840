"""The joint score J: style success x content similarity x fluency, per sentence; the leaderboard.
May import: core, aggregate, metrics, scorecard."""
