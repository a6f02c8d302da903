"""``pipelines.resolution`` stays the resolution library's import path after the move into
``pipelines.core.resolution``: outside scripts (benchmark harnesses, notebooks) keep working."""

import importlib


def test_the_old_import_path_is_the_same_library():
    from pipelines.core import resolution as core_resolution
    from pipelines.core.resolution import papers as core_papers
    from pipelines.resolution import match_authors, match_papers  # the public API's path

    assert match_authors is core_resolution.match_authors and match_papers is core_resolution.match_papers
    assert importlib.import_module("pipelines.resolution.papers") is core_papers
    from pipelines.resolution.authors import fit_author_model
    assert fit_author_model is importlib.import_module("pipelines.core.resolution.authors").fit_author_model
