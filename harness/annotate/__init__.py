"""Human rating studies of a scored run: the blind sample, template, store, server, platforms, reliability.
May import: core, metaeval.tables; the loop back to meta-evaluation is tsteval.metaeval.rated.loop."""
