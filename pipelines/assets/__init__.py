"""The asset graph, one module per layer: ingest (raw) → staging → core → marts → exports."""
