"""Dagster resources: thin, configurable wrappers over the plain modules in pipelines/."""

from pipelines.resources.apis import EnrichmentResource
from pipelines.resources.live import LiveProfileSourceResource, page_source_from_env
from pipelines.resources.sources import CapturesFolderResource, PageSourceResource
from pipelines.resources.warehouse import WarehouseResource

__all__ = [
    "CapturesFolderResource",
    "EnrichmentResource",
    "LiveProfileSourceResource",
    "PageSourceResource",
    "WarehouseResource",
    "page_source_from_env",
]
