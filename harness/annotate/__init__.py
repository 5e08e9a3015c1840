"""Human rating studies of a scored run: the blind sample, template, store, server, platforms, reliability.
May import: core, aggregate, metaeval.tables; the loop back to meta-evaluation: tsteval.metaeval.rated.loop."""
