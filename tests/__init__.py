"""Every test (``make test``); ``tests/<package>/`` mirrors ``pipelines/<package>/``."""
