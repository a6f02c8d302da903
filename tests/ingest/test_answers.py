"""The answer checks (pipelines/ingest/sources/answers.py) on their own: right answers pass, wrong ones get their reason."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from pipelines.ingest.sources import answers as A
from pipelines.ingest.sources.arxiv import ArxivAuthor, ArxivRecord
from pipelines.ingest.sources.openalex import Authorship, OpenAlexAuthor, OpenAlexWork

DYNATRAIN = "DynaTrain: Fast Online Parallelism Switching for Elastic LLM Training"
HONPAS = "The {} parallel distribution algorithms for hybrid density-functional calculations in HONPAS package"
KNOWN = A.evidence([DYNATRAIN], [2026], ["Daning Cheng", "Yuanqing Wang"], version=2)


def record(arxiv_id="2604.02156", version=2, title=DYNATRAIN, authors=("Yuanqing Wang", "Daning Cheng"),
           published=2026, updated=2026) -> ArxivRecord:
    def ts(year):
        return datetime(year, 4, 3, tzinfo=timezone.utc)
    return ArxivRecord(arxiv_id, version, title, "", tuple(ArxivAuthor(n) for n in authors), "cs.DC", ("cs.DC",),
                       ts(published), ts(updated), None, None, None)


def work(openalex_id="W1", doi="10.48550/arxiv.2604.02156", arxiv_id="2604.02156", title=DYNATRAIN, year=2026,
         names=("Yuanqing Wang", "D. Cheng"), cited=7) -> OpenAlexWork:
    ships = tuple(Authorship(i, None, n, n, f"A{i}", None) for i, n in enumerate(names, 1))
    return OpenAlexWork(openalex_id, doi, arxiv_id, title, None, year, None, "preprint", cited, ((2026, cited),), ships, False)


def person(orcid="0000-0003-3821-9043", name="Daning Cheng", alternatives=("D. Cheng",), h=5) -> OpenAlexAuthor:
    return OpenAlexAuthor("A5", orcid, name, alternatives, 18, 96, h, 3, ())


def test_titles_compatible_reads_titles_as_the_paper_matcher_does():
    assert A.titles_compatible("MoE-DisCo:Low Economy Cost Training", "MoE-DisCo: Low Economy Cost Training")
    assert A.titles_compatible(DYNATRAIN, "DynaTrain: fast online parallelism switching for elastic LLM training.")
    assert A.titles_compatible(DYNATRAIN, "Fast Online Parallelism Switching for Elastic LLM Training")   # subtitle kept only
    assert not A.titles_compatible(HONPAS.format("static"), HONPAS.format("dynamic"))                    # a veto
    assert not A.titles_compatible(DYNATRAIN, "Residual Scattering Networks for Coastal Sediment Transport")
    assert not A.titles_compatible(DYNATRAIN, None)


def test_years_and_names():
    assert A.years_compatible([2025], [2026]) and not A.years_compatible([2019], [2026])
    assert A.years_compatible([], [2026]) and A.years_compatible([2019], [])
    # found by id: a preprint older than the (journal) year listed is fine, a paper newer than its listing is not
    assert A.years_compatible([2019], [2026], older_ok=True) and not A.years_compatible([2031], [2026], older_ok=True)
    assert A.names_agree(["D. Cheng"], ["Daning Cheng"]) and not A.names_agree(["Daning Cheng"], ["Daning Chen"])
    assert A.names_agree([], ["Anyone"])


def test_a_right_arxiv_record_passes_and_each_wrong_one_gets_its_reason():
    assert A.check_arxiv_record(record(), "2604.02156", KNOWN) is None
    assert A.check_arxiv_record(record(version=3, updated=2027), "2604.02156", KNOWN) is None   # newer: fine
    assert A.check_arxiv_record(record(), "2604.02156") is None                               # nothing to contradict
    journal = A.evidence([DYNATRAIN], [2028], ["Daning Cheng"])                               # listed with its journal year
    assert A.check_arxiv_record(record(), "2604.02156", journal) is None
    assert A.check_arxiv_record(record(), "2604.02156", journal, by="title").reason == A.YEAR_MISMATCH
    cases = {
        A.ID_MISMATCH: record(arxiv_id="2510.99001"),
        A.VERSION_MISMATCH: record(version=1),
        A.IMPLAUSIBLE_VALUE: record(version=10**6),
        A.TITLE_MISMATCH: record(title="Residual Scattering Networks for Coastal Sediment Transport"),
        A.YEAR_MISMATCH: record(published=2029, updated=2030),
        A.AUTHORS_MISMATCH: record(authors=("Other Person",)),
    }
    for reason, wrong in cases.items():
        rejection = A.check_arxiv_record(wrong, "2604.02156", KNOWN)
        assert rejection is not None and rejection.reason == reason, reason


def test_a_right_openalex_work_passes_and_each_wrong_one_gets_its_reason():
    assert A.check_openalex_work(work(), asked="2604.02156", by="arxiv_doi", known=KNOWN) is None
    # OpenAlex merged the preprint into the journal version: another DOI, but it carries the arXiv id
    assert A.check_openalex_work(work(doi="10.1000/j.x", year=2027), asked="2604.02156", by="arxiv_doi", known=KNOWN) is None
    assert A.check_openalex_work(work(), asked="W1", by="openalex_id", known=KNOWN) is None
    cases = {
        A.ID_MISMATCH: dict(doi="10.1000/other", arxiv_id=None),
        A.TITLE_MISMATCH: dict(title="Residual Scattering Networks for Coastal Sediment Transport"),
        A.YEAR_MISMATCH: dict(year=2031),
        A.AUTHORS_MISMATCH: dict(names=("Marta Wrongfield",)),
        A.IMPLAUSIBLE_VALUE: dict(cited=-1),
        A.UNEXPECTED_SHAPE: dict(openalex_id=""),
    }
    for reason, change in cases.items():
        rejection = A.check_openalex_work(work(**change), asked="2604.02156", by="arxiv_doi", known=KNOWN)
        assert rejection is not None and rejection.reason == reason, reason
    assert A.check_openalex_work(work(openalex_id="W2"), asked="W1", by="openalex_id").reason == A.ID_MISMATCH
    assert A.check_openalex_work(work(doi="10.1/b"), asked="10.1/a", by="doi").reason == A.ID_MISMATCH
    with pytest.raises(ValueError):
        A.check_openalex_work(work(), asked="x", by="isbn")


def test_a_person_must_be_the_orcid_asked_and_carry_a_name_it_was_found_under():
    found_as = ["D. Cheng", "Daning Cheng"]
    assert A.check_openalex_author(person(), asked_orcid="0000-0003-3821-9043", names=found_as) is None
    assert A.check_openalex_author(person(orcid="0000-0001-2345-6789"), asked_orcid="0000-0003-3821-9043",
                                   names=found_as).reason == A.ID_MISMATCH
    assert A.check_openalex_author(person(orcid=None), asked_orcid="0000-0003-3821-9043", names=found_as).reason == A.ID_MISMATCH
    assert A.check_openalex_author(person(name="Marta Wrongfield", alternatives=()), asked_orcid="0000-0003-3821-9043",
                                   names=found_as).reason == A.NAME_MISMATCH
    assert A.check_openalex_author(person(h=2**40), asked_orcid="0000-0003-3821-9043", names=found_as).reason == A.IMPLAUSIBLE_VALUE
    with pytest.raises(ValueError):
        A.Rejection("made_up", "x")
