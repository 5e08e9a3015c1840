"""tsteval harness: data model, loaders, aspect scorers, aggregation and the CLI."""
