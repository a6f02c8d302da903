"""Author matching: the sample pages' people, name forms, homonyms, look-alikes, determinism."""

from __future__ import annotations

import random

import numpy as np
import polars as pl
import pytest

from pipelines.core.resolution import author_review_pairs, match_authors, match_papers, name_compatibility, resolve_authors
from benchmarks.bibliographies import synthetic_mentions
try:  # the sample listings are typed once, in the paper tests
    from tests.core.test_resolution_papers import SAMPLE_LISTINGS, sample_records
except ImportError:  # tests collected as a package
    from tests.core.test_resolution_papers import SAMPLE_LISTINGS, sample_records

MENTION_SCHEMA = {
    "mention_id": pl.String, "name": pl.String, "paper_id": pl.String, "coauthors": pl.List(pl.String),
    "title": pl.String, "year": pl.Int64, "venue": pl.String, "affiliation": pl.String, "source": pl.String,
    "source_profile_id": pl.String, "is_profile_owner": pl.Boolean, "orcid": pl.String,
}


def mentions(rows: list[dict]) -> pl.DataFrame:
    base = {"coauthors": [], "title": None, "year": None, "venue": None, "affiliation": None, "source": None,
            "source_profile_id": None, "is_profile_owner": False, "orcid": None}
    return pl.DataFrame([{**base, **r} for r in rows], schema=MENTION_SCHEMA)


def sample_mentions() -> pl.DataFrame:
    """Owner mentions for every listing, byline mentions for Scholar Feed listings, on matched papers."""
    paper = dict(match_papers(sample_records()).select("record_id", "paper_id").iter_rows())
    rows = []
    for lid, src, pid, owner, title, year, byline in SAMPLE_LISTINGS:
        rows.append({"mention_id": f"{lid}/owner", "name": owner, "paper_id": paper[lid], "coauthors": byline,
                     "title": title, "year": year, "source": src, "source_profile_id": pid, "is_profile_owner": True})
        for k, name in enumerate(byline):
            rows.append({"mention_id": f"{lid}/{k}", "name": name, "paper_id": paper[lid],
                         "coauthors": [n for n in byline if n != name], "title": title, "year": year, "source": src})
    return mentions(rows)


def author_of(result: pl.DataFrame) -> dict[str, str]:
    return dict(zip(result["mention_id"].to_list(), result["author_id"].to_list()))


@pytest.fixture(scope="module")
def sample():
    frame = sample_mentions()
    result, review = resolve_authors(frame)
    return frame, result, review


def test_yunquan_zhang_on_two_sites_is_one_person(sample):
    _, result, _ = sample
    author = author_of(result)
    yunquan = {author[f"{lid}/owner"] for lid, *_ in SAMPLE_LISTINGS if lid.startswith(("bz-yz", "sf-yz"))}
    assert len(yunquan) == 1
    # ... and the byline entries "Yunquan Zhang" on Scholar Feed papers are the same person.
    assert author["sf-yz-01/2"] == author["sf-yz-01/owner"]
    assert author["sf-yz-12/1"] == author["sf-yz-01/owner"]


def test_owner_hidden_by_truncated_byline_is_not_the_similar_byline_name(sample):
    _, result, _ = sample
    author = author_of(result)
    # DynaTrain on Scholar Feed: "Yuanqing Wang, Yuchen Zhang, Hao Lin et al." — the owner is not shown.
    assert author["sf-yz-04/1"] != author["sf-yz-04/owner"]
    assert name_compatibility("Yuchen Zhang", "Yunquan Zhang") == 0


def test_daning_chen_is_not_merged_into_daning_cheng_by_name(sample):
    _, result, review = sample
    author = author_of(result)
    cheng = author["bz-dc-1/owner"]
    assert author["sf-yz-06/0"] == cheng  # the byline "Daning Cheng" on the shared test-risk paper
    assert author["sf-yz-01/1"] == cheng  # ... and on the compression papers (shared co-authors)
    assert author["sf-yz-07/2"] != cheng  # "Daning Chen" on the CALM byline
    labels = {frozenset((a, b)) for a, b in review.select("left_label", "right_label").iter_rows()}
    assert frozenset(("Daning Chen", "Daning Cheng")) in labels
    row = review.filter((pl.col("left_label") + pl.col("right_label")).str.contains("Daning Chen"))
    assert row["evidence_for"].str.contains("co-author").any()


def test_distinct_names_on_one_byline_are_distinct_people(sample):
    frame, result, _ = sample
    joined = frame.join(result, on="mention_id")
    for (paper_id,), group in joined.filter(~pl.col("is_profile_owner")).group_by(["paper_id"]):
        names_per_author = group.group_by("author_id").agg(pl.col("name").n_unique())
        assert names_per_author["name"].max() == 1, paper_id


def test_boyang_zhang_byline_mentions_cluster_on_shared_coauthors(sample):
    _, result, _ = sample
    author = author_of(result)
    boyang = {author[f"{lid}/0"] for lid in ("sf-yz-01", "sf-yz-02", "sf-yz-08", "sf-yz-10", "sf-yz-11")}
    assert len(boyang) == 1


def test_profile_owner_and_own_byline_entry_on_one_paper():
    frame = mentions(
        [
            {"mention_id": "o", "name": "Yunquan Zhang", "paper_id": "p1", "coauthors": ["Boyang Zhang", "Y. Zhang"],
             "source": "scholarfeed", "source_profile_id": "3", "is_profile_owner": True},
            {"mention_id": "b1", "name": "Boyang Zhang", "paper_id": "p1", "coauthors": ["Y. Zhang"]},
            {"mention_id": "b2", "name": "Y. Zhang", "paper_id": "p1", "coauthors": ["Boyang Zhang"]},
        ]
    )
    author = author_of(match_authors(frame))
    assert author["o"] == author["b2"] != author["b1"]


def test_two_entries_of_one_byline_behind_a_truncated_coauthor_list_are_two_people():
    """A row is one name on one document: two rows of one paper that name no source (a
    benchmark's signatures) are two of its authors, even when each one's co-author list stops at
    a collaboration's first names and so does not show the other. A named source may list one
    paper on several profiles, with names written differently: there compatible names on one
    paper are one person unless the byline lists them side by side."""
    first_fifty = [f"Author{k:02d}, A." for k in range(50)]
    frame = mentions(
        [
            {"mention_id": "a", "name": "Wang, Zheng", "paper_id": "p1", "coauthors": first_fifty},
            {"mention_id": "b", "name": "Wang, Z.Y.", "paper_id": "p1", "coauthors": first_fifty},
            # One site's two listings of one paper (two profiles), the name written two ways.
            {"mention_id": "c", "name": "Yunquan Zhang", "paper_id": "p2", "coauthors": ["Hao Lin"], "source": "scholarfeed"},
            {"mention_id": "d", "name": "Y. Zhang", "paper_id": "p2", "coauthors": ["Hao Lin"], "source": "scholarfeed"},
            # One byline seen on two sites: the same authorship read twice.
            {"mention_id": "e", "name": "Yunquan Zhang", "paper_id": "p3", "coauthors": ["Hao Lin"], "source": "scholarfeed"},
            {"mention_id": "f", "name": "Y. Zhang", "paper_id": "p3", "coauthors": ["Hao Lin"], "source": "openalex"},
        ]
    )
    author = author_of(match_authors(frame))
    assert author["a"] != author["b"]
    assert author["c"] == author["d"]
    assert author["e"] == author["f"]


def test_owner_compatible_with_two_co_listed_names_is_ambiguous():
    frame = mentions(
        [
            {"mention_id": "o", "name": "Y. Zhang", "paper_id": "p1", "coauthors": ["Yunquan Zhang", "Yuchen Zhang"],
             "source": "x", "source_profile_id": "9", "is_profile_owner": True},
            {"mention_id": "a", "name": "Yunquan Zhang", "paper_id": "p1", "coauthors": ["Yuchen Zhang"]},
            {"mention_id": "b", "name": "Yuchen Zhang", "paper_id": "p1", "coauthors": ["Yunquan Zhang"]},
        ]
    )
    result, review = resolve_authors(frame)
    assert result["author_id"].n_unique() == 3
    assert review.height >= 1 and review["evidence_against"].str.contains("several names").any()


@pytest.mark.parametrize(
    ("left", "right"),
    [
        ("Yunquan Zhang", "Y. Zhang"),
        ("Yunquan Zhang", "Zhang Yunquan"),
        ("Jun-Hui Lu", "Junhui Lu"),
        ("José García", "Jose Garcia"),
        ("Marek Rusinkiewicz", "M Rusinkiewicz"),
    ],
)
def test_name_variants_merge_with_evidence(left, right):
    frame = mentions(
        [
            # Three co-authors by full name and one by initial: enough even for an initials-only form.
            {"mention_id": "1", "name": left, "paper_id": "p1", "coauthors": ["Ann Lee", "Bob Ray", "Cy Twombly", "Di Fox"]},
            {"mention_id": "2", "name": right, "paper_id": "p2", "coauthors": ["A. Lee", "Bob Ray", "Cy Twombly", "Di Fox"]},
        ]
    )
    assert match_authors(frame)["author_id"].n_unique() == 1


def test_names_alone_never_merge():
    frame = mentions(
        [
            # The same full name and nothing else known about either mention.
            {"mention_id": "1", "name": "Wei Wang", "paper_id": "p1"},
            {"mention_id": "2", "name": "Wei Wang", "paper_id": "p2"},
            # The same name, and nothing else agrees: other co-authors, other institutions.
            {"mention_id": "7", "name": "Lan Zhou", "paper_id": "p7", "coauthors": ["Ann Lee"], "affiliation": "Tsinghua University"},
            {"mention_id": "8", "name": "Lan Zhou", "paper_id": "p8", "coauthors": ["Bob Ray"], "affiliation": "University of Oslo"},
            # Look-alikes sharing co-authors: still two people, sent to review.
            {"mention_id": "3", "name": "Daning Chen", "paper_id": "p3", "coauthors": ["Yunquan Zhang", "Boyang Zhang"]},
            {"mention_id": "4", "name": "Daning Cheng", "paper_id": "p4", "coauthors": ["Yunquan Zhang", "Boyang Zhang"]},
            {"mention_id": "5", "name": "Yuchen Zhang", "paper_id": "p5", "coauthors": ["Hao Lin", "Yuanqing Wang"]},
            {"mention_id": "6", "name": "Yunquan Zhang", "paper_id": "p6", "coauthors": ["Hao Lin", "Yuanqing Wang"]},
        ]
    )
    result, review = resolve_authors(frame)
    assert result["author_id"].n_unique() == 8
    pairs = {frozenset((a, b)) for a, b in review.select("left_id", "right_id").iter_rows()}
    assert frozenset(("3", "4")) in pairs and frozenset(("5", "6")) in pairs
    assert frozenset(("1", "2")) in pairs  # the same name: worth a look, not a merge


def test_a_rare_name_needs_less_evidence_than_a_common_one():
    """Evidence is weighed by how telling it is (term frequency in people, not mentions): the same
    affiliation and a close year join two mentions of a rare name, while a name carried by many
    people who share nothing needs more than that."""
    from pipelines.core.resolution.author_mentions import prepare_mentions
    from pipelines.core.resolution.authors import fit_author_model
    from pipelines.core.resolution.author_linkage import compare_block, mention_evidence, pair_probabilities

    rows = []
    for k in range(12):  # twelve people called Wei Wang: each their own co-authors and institute
        rows.append({"mention_id": f"w{k:02d}", "name": "Wei Wang", "paper_id": f"wp{k}", "coauthors": [f"Co{k} Author"],
                     "affiliation": f"Institute {k}", "year": 2000 + k})
    rows += [
        {"mention_id": "wa", "name": "Wei Wang", "paper_id": "wa", "coauthors": ["Ann Lee"], "affiliation": "Tsinghua University", "year": 2020},
        {"mention_id": "wb", "name": "Wei Wang", "paper_id": "wb", "coauthors": ["Bob Ray"], "affiliation": "Tsinghua University", "year": 2020},
        {"mention_id": "xa", "name": "Xin-Nian Wang", "paper_id": "xa", "coauthors": ["Cy Twombly"], "affiliation": "Duke University", "year": 1998},
        {"mention_id": "xb", "name": "Xin-Nian Wang", "paper_id": "xb", "coauthors": ["Di Fox"], "affiliation": "Duke University", "year": 1999},
    ]
    frame = mentions(rows)
    model = fit_author_model(frame)
    m = prepare_mentions(frame)
    ev = mention_evidence(m.names, m.coauthor_keys, m.titles, m.years, m.venue, m.affiliation, model)
    at = {x: i for i, x in enumerate(m.ids)}
    pair = lambda a, b: np.array([at[a], at[b]])  # noqa: E731
    probability = {key: pair_probabilities(ev, model, compare_block(ev, pair(*key)), pair(*key)[:, None])[0, 1]
                   for key in (("wa", "wb"), ("xa", "xb"))}
    assert probability[("xa", "xb")] > probability[("wa", "wb")]
    author = author_of(match_authors(frame))
    assert author["xa"] == author["xb"]


def test_a_rare_full_name_with_agreeing_venue_and_years_is_one_person():
    """A rare full name plus evidence that, taken together, leans one way (the same journals in
    the same years, other co-authors, no affiliation recorded) is one person: a move between
    groups must not split a career. The same pattern under a name that many people carry is not
    enough."""
    rows = []
    for k in range(12):  # twelve people called Wei Wang, each with their own co-author and journal
        rows.append({"mention_id": f"w{k:02d}", "name": "Wei Wang", "paper_id": f"wp{k}", "coauthors": [f"Co{k} Author"],
                     "venue": f"Journal {k}", "year": 2000 + k})
    rows += [
        {"mention_id": "wa", "name": "Wei Wang", "paper_id": "wa", "coauthors": ["Ann Lee"], "venue": "Astrophys.J.", "year": 2009},
        {"mention_id": "wb", "name": "Wei Wang", "paper_id": "wb", "coauthors": ["Bob Ray"], "venue": "Astrophys.J.", "year": 2010},
        {"mention_id": "ja", "name": "Junfeng Okafor", "paper_id": "ja", "coauthors": ["Eric Feigelson"], "venue": "Astrophys.J.",
         "title": "X-ray study of triggered star formation", "year": 2009},
        {"mention_id": "jb", "name": "Junfeng Okafor", "paper_id": "jb", "coauthors": ["Giuseppina Fabbiano"],
         "venue": "Astrophys.J.", "title": "Chandra imaging of the circumnuclear region of NGC 4151", "year": 2010},
    ]
    author = author_of(match_authors(mentions(rows)))
    assert author["ja"] == author["jb"]
    assert author["wa"] != author["wb"]


def test_a_name_rarer_than_the_typical_one_needs_one_leaning_signal_even_when_several_groups_carry_it():
    """How rare a name is, is judged against the input's typical name (its term frequency in
    people), not against a fixed count: a full name whose mentions fall into three unlinked groups
    is still far rarer than one that a dozen people carry, so the same journal in consecutive years
    corroborates two of its mentions (before: more than two groups made it "common")."""
    rows = []
    surnames = "Abbott Baker Carter Dawson Ellis Fisher Garcia Hughes Irwin Jensen Keller Lopez".split()
    for k, surname in enumerate(surnames):  # twelve people called Wei Wang, nothing shared
        rows.append({"mention_id": f"w{k:02d}", "name": "Wei Wang", "paper_id": f"wp{k}", "coauthors": [f"Ann {surname}"],
                     "venue": f"Journal {k}", "year": 2000 + k})
    rows += [
        {"mention_id": "ja", "name": "Junfeng Okafor", "paper_id": "ja", "coauthors": ["Eric Feigelson"], "venue": "Astrophys.J.",
         "title": "X-ray study of triggered star formation", "year": 2009},
        {"mention_id": "jb", "name": "Junfeng Okafor", "paper_id": "jb", "coauthors": ["Giuseppina Fabbiano"],
         "venue": "Astrophys.J.", "title": "Chandra imaging of the circumnuclear region of NGC 4151", "year": 2010},
        {"mention_id": "jc", "name": "Junfeng Okafor", "paper_id": "jc", "coauthors": ["Hans Moser"],
         "venue": "Phys.Rev.B", "title": "Phonon transport in layered cuprates", "year": 1988},
        # The same leaning evidence under the common name is not enough.
        {"mention_id": "wa", "name": "Wei Wang", "paper_id": "wa", "coauthors": ["Ann Lee"], "venue": "Astrophys.J.", "year": 2009},
        {"mention_id": "wb", "name": "Wei Wang", "paper_id": "wb", "coauthors": ["Bob Ray"], "venue": "Astrophys.J.", "year": 2010},
    ]
    author = author_of(match_authors(mentions(rows)))
    assert author["ja"] == author["jb"]
    assert author["jc"] != author["ja"]
    assert author["wa"] != author["wb"]


def test_affiliations_are_alike_by_their_telling_words_not_their_boilerplate():
    """Two long affiliations of one country's medical schools share most of their words
    ("Department of", "College of Medicine", "University", "Seoul, Korea"); weighed by how rare
    each word is, two departments of two universities are not "similar" (before: unweighted word
    overlap made them so, and two Ji Hyun Parks in ophthalmology and endocrinology one person),
    while one department written two ways still is."""
    from pipelines.core.resolution.author_mentions import prepare_mentions
    from pipelines.core.resolution.authors import fit_author_model
    from pipelines.core.resolution.author_linkage import compare_block, mention_evidence

    departments = "Cardiology Ophthalmology Endocrinology Pediatrics Radiology Urology Dermatology Neurology".split()
    universities = "Yonsei Korea Kyunghee Hanyang Ajou Inha".split()
    rows = [{"mention_id": f"m{d}{u}", "name": f"Min {k} Lee", "paper_id": f"p{d}{u}",
             "affiliation": f"Department of {dept}, College of Medicine, {uni} University, Seoul, Korea"}
            for k, (d, dept) in enumerate(enumerate(departments)) for u, uni in enumerate(universities)]
    rows += [
        {"mention_id": "a", "name": "Ji Hyun Park", "paper_id": "pa",
         "affiliation": "Department of Ophthalmology, College of Medicine, Yonsei University, Seoul, Korea"},
        {"mention_id": "b", "name": "Ji Hyun Park", "paper_id": "pb",
         "affiliation": "Department of Endocrinology, College of Medicine, Hanyang University, Seoul, Korea"},
        {"mention_id": "c", "name": "Ji Hyun Park", "paper_id": "pc",
         "affiliation": "Dept. of Ophthalmology, Yonsei University College of Medicine"},
    ]
    frame = mentions(rows)
    model = fit_author_model(frame)
    m = prepare_mentions(frame)
    ev = mention_evidence(m.names, m.coauthor_keys, m.titles, m.years, m.venue, m.affiliation, model)
    at = {x: i for i, x in enumerate(m.ids)}
    rows_abc = np.array([at["a"], at["b"], at["c"]])
    affiliation = compare_block(ev, rows_abc)["affiliation"]
    assert affiliation[0, 1] == 0  # other department, other university: different
    assert affiliation[0, 2] == 1  # one department written two ways: similar


def test_identical_names_with_shared_coauthor_or_paper_are_one_person():
    frame = mentions(
        [
            {"mention_id": "1", "name": "Wei Wang", "paper_id": "p1", "coauthors": ["Ann Lee", "Bob Ray"]},
            {"mention_id": "2", "name": "Wei Wang", "paper_id": "p2", "coauthors": ["Ann Lee"]},
            {"mention_id": "3", "name": "W. Wang", "paper_id": "p3", "coauthors": ["Ann Lee"]},  # initials + 1 co-author: not enough
        ]
    )
    author = author_of(match_authors(frame))
    assert author["1"] == author["2"]
    assert author["3"] != author["1"]


def test_two_profiles_on_one_site_are_not_merged_on_shared_coauthors():
    # Two Wei Wangs of one lab, each with their own BZPEER profile, share all their co-authors:
    # a site holds one researcher once, so they stay two people (and are queued for review).
    lab = ["Ann Lee", "Bob Ray", "Cy Twombly", "Di Fox"]
    frame = mentions(
        [
            {"mention_id": "a1", "name": "Wei Wang", "paper_id": "p1", "coauthors": lab, "source": "bzpeer",
             "source_profile_id": "11", "is_profile_owner": True},
            {"mention_id": "b1", "name": "Wei Wang", "paper_id": "p2", "coauthors": lab, "source": "bzpeer",
             "source_profile_id": "22", "is_profile_owner": True},
            # The same person on the other site does join the first profile.
            {"mention_id": "c1", "name": "Wei Wang", "paper_id": "p1", "coauthors": lab, "source": "scholarfeed",
             "source_profile_id": "7", "is_profile_owner": True},
        ]
    )
    result, review = resolve_authors(frame)
    author = author_of(result)
    assert author["a1"] == author["c1"] != author["b1"]
    assert review["evidence_against"].str.contains("different profiles on one site").any()


def test_duplicate_profiles_on_one_site_listing_one_paper_are_one_person():
    # A researcher's second profile on one site lists the same paper: same-paper evidence merges.
    frame = mentions(
        [
            {"mention_id": "a", "name": "Wei Wang", "paper_id": "p1", "source": "bzpeer", "source_profile_id": "11",
             "is_profile_owner": True},
            {"mention_id": "b", "name": "W. Wang", "paper_id": "p1", "source": "bzpeer", "source_profile_id": "12",
             "is_profile_owner": True},
        ]
    )
    assert match_authors(frame)["author_id"].n_unique() == 1


def test_orcid_is_identity_evidence():
    frame = mentions(
        [
            {"mention_id": "1", "name": "Wei Wang", "paper_id": "p1", "orcid": "https://orcid.org/0000-0002-1825-0097"},
            {"mention_id": "2", "name": "W. Wang", "paper_id": "p2", "orcid": "0000-0002-1825-0097"},
            # Same name, shared co-authors, but a different ORCID: never merged.
            {"mention_id": "3", "name": "Wei Wang", "paper_id": "p3", "coauthors": ["Ann Lee", "Bob Ray"], "orcid": "0000-0001-5109-3700"},
            {"mention_id": "4", "name": "Wei Wang", "paper_id": "p4", "coauthors": ["Ann Lee", "Bob Ray"], "orcid": "0000-0002-1825-0097"},
        ]
    )
    author = author_of(match_authors(frame))
    assert author["1"] == author["2"] == author["4"]
    assert author["3"] != author["1"]
    methods = dict(zip(*match_authors(frame).select("mention_id", "method").to_dict(as_series=False).values()))
    assert methods["2"] == "orcid"


def test_deterministic_under_row_shuffles(sample):
    frame, result, review = sample
    rng = random.Random(5)
    for _ in range(2):
        order = list(range(frame.height))
        rng.shuffle(order)
        shuffled_result, shuffled_review = resolve_authors(frame[order])
        assert shuffled_result.sort("mention_id").equals(result.sort("mention_id"))
        assert shuffled_review.equals(review)


def test_review_pairs_follow_the_given_result(sample):
    frame, result, review = sample
    assert author_review_pairs(frame, result).equals(review)


def test_empty_and_nulls():
    empty = match_authors(mentions([]))
    assert empty.height == 0 and empty.columns == ["mention_id", "author_id", "method", "score"]
    minimal = pl.DataFrame({"mention_id": ["1", "2", "3"], "name": [None, "", "et al."], "paper_id": ["p", "p", None]})
    result = match_authors(minimal)
    assert result["author_id"].n_unique() == 3


def test_synthetic_people_precision_and_recall():
    frame, truth = synthetic_mentions(seed=11, n_groups=40)
    result = match_authors(frame).join(truth, on="mention_id")
    # Pairwise precision over mentions merged into one author.
    pairs = result.join(result, on="author_id", suffix="_r").filter(pl.col("mention_id") < pl.col("mention_id_r"))
    precision = (pairs["true_person"] == pairs["true_person_r"]).mean()
    true_pairs = result.join(result, on="true_person", suffix="_r").filter(pl.col("mention_id") < pl.col("mention_id_r"))
    recall = (true_pairs["author_id"] == true_pairs["author_id_r"]).mean()
    assert precision >= 0.97 and recall >= 0.75, (precision, recall)


def test_batches_of_components_give_the_result_of_one_piece(monkeypatch):
    """Large inputs are resolved per batch of independent components (memory stays bounded):
    the clusters, scores and review rows are those of resolving everything at once."""
    frame, _ = synthetic_mentions(seed=3, n_groups=60)
    frame = frame.with_columns(orcid=pl.when(pl.int_range(pl.len()) % 97 == 0).then(pl.lit("0000-0002-1825-0097")))
    whole, whole_review = resolve_authors(frame)
    from pipelines.core.resolution.authors import components
    assert int(components(frame).max()) > 5  # several components, so several batches
    batched, batched_review = resolve_authors(frame, batch=50)
    assert batched.equals(whole)
    assert batched_review.equals(whole_review) and whole_review.height > 0
    assert author_review_pairs(frame, whole).equals(whole_review)


def test_batches_resolved_in_worker_processes_give_the_result_of_one_piece(monkeypatch):
    """Large inputs spread their batches of components over worker processes: same result."""
    from pipelines.core.resolution import authors as authors_module

    frame, _ = synthetic_mentions(seed=5, n_groups=60)
    whole, whole_review = resolve_authors(frame)
    monkeypatch.setattr(authors_module, "PARALLEL_AUTHOR_MIN", 1)
    parallel, parallel_review = resolve_authors(frame, workers=2, batch=80)
    assert parallel.equals(whole)
    assert parallel_review.equals(whole_review) and whole_review.height > 0


def test_components_join_mentions_that_share_identity_evidence():
    from pipelines.core.resolution.authors import components
    frame = mentions([
        {"mention_id": "1", "name": "Wei Wang", "paper_id": "p1", "orcid": "0000-0002-1825-0097"},
        {"mention_id": "2", "name": "Vivian Wong", "paper_id": "p2", "orcid": "https://orcid.org/0000-0002-1825-0097"},
        {"mention_id": "3", "name": "Anna Berg", "paper_id": "p3", "source": "bzpeer", "source_profile_id": "x", "is_profile_owner": True},
        {"mention_id": "4", "name": "A. Lindqvist", "paper_id": "p4", "source": "bzpeer", "source_profile_id": "x", "is_profile_owner": True},
        {"mention_id": "5", "name": "Zoe Quint", "paper_id": "p5"},
    ])
    comp = components(frame).tolist()
    assert comp[0] == comp[1] and comp[2] == comp[3]
    assert len({comp[0], comp[2], comp[4]}) == 3


def _names_on_papers_read_mention_by_mention(frame: pl.DataFrame) -> dict:
    """The reference: every mention read in turn (an own form's key overriding a co-author's)."""
    from pipelines.core.resolution.author_mentions import _listed_coauthors
    from pipelines.core.resolution.names import name_forms

    names = [n or "" for n in frame["name"].cast(pl.String).to_list()]
    own_forms = [name_forms(n) for n in names]
    _, keys, full = _listed_coauthors(own_forms, frame["coauthors"].to_list(), {})
    on_paper: dict = {}
    own_full_keys: dict = {}
    for p, co_keys, co_full, (own_key, own_full, _) in zip(frame["paper_id"].cast(pl.String).to_list(), keys, full, own_forms):
        if p is None:
            continue
        paper_keys, paper_full = on_paper.setdefault(p, (set(), {}))
        paper_keys.update(co_keys)
        for form in co_full:
            paper_full.setdefault(form, name_forms(form)[0])
        if own_key is not None:
            paper_keys.add(own_key)
            if own_full:
                own_full_keys.setdefault(p, {})[own_full] = own_key
    for p, forms in own_full_keys.items():
        on_paper[p][1].update(forms)
    return on_paper


def test_names_on_each_paper_gathered_by_joins_match_the_per_mention_reading():
    """``paper_names_of`` (joins over distinct names) gives what reading each mention gives."""
    from pipelines.core.resolution.author_mentions import paper_names_of

    frame, _ = synthetic_mentions(seed=7, n_groups=30)
    edge = mentions([
        {"mention_id": "e1", "name": "Wei Zhang", "paper_id": "px", "coauthors": ["Zhang Wei", "W. Zhang", "Anna Berg", None]},
        {"mention_id": "e2", "name": None, "paper_id": "px", "coauthors": ["et al.", ""]},
        {"mention_id": "e3", "name": "A. Berg", "paper_id": "px", "coauthors": None},
        {"mention_id": "e4", "name": "???", "paper_id": "py", "coauthors": ["!!"]},
        {"mention_id": "e5", "name": "Zoe Quint", "paper_id": None, "coauthors": ["Anna Berg"]},
        # "Smith, Ph.D." reads as "smith p"; its full form "phd smith" reads as "smith": the own key wins.
        {"mention_id": "e6", "name": "Smith, Ph.D.", "paper_id": "pz", "coauthors": ["Ann Lee"]},
        {"mention_id": "e7", "name": "Ann Lee", "paper_id": "pz", "coauthors": ["phd smith"]},
    ])
    frame = pl.concat([frame, edge], how="diagonal_relaxed")
    expected = _names_on_papers_read_mention_by_mention(frame)
    got = paper_names_of(frame)
    assert got == expected
    assert "py" in got and got["pz"][1].get("phd smith") == "smith p"
    # The same in any row order.
    assert paper_names_of(frame.reverse()) == expected


def test_batched_input_rejects_repeated_mention_ids_and_needs_no_profile_columns(monkeypatch):
    frame, _ = synthetic_mentions(seed=3, n_groups=20)
    twice = pl.concat([frame, frame.head(1).with_columns(name=pl.lit("Somebody Else"))], how="vertical_relaxed")
    with pytest.raises(ValueError, match="mention_id must be unique"):
        resolve_authors(twice, batch=50)
    # The profile columns are optional, in one piece and in batches alike.
    bare = frame.drop([c for c in ("source", "source_profile_id", "is_profile_owner") if c in frame.columns])
    batched = resolve_authors(bare, batch=50)
    assert batched[0].equals(resolve_authors(bare, batch=1_000_000)[0])


def test_the_vectorised_name_compatibility_table_equals_the_pairwise_rule():
    """The linkage settles most name pairs of a block with array operations (letters, family,
    first given word); every value must equal names.name_compatibility's, pair by pair."""
    import itertools

    from pipelines.core.resolution.author_linkage import _compatibility_table
    from pipelines.core.resolution.names import name_compatibility, parse_name

    frame, _ = synthetic_mentions(seed=5, n_groups=40)
    names = set(frame["name"].drop_nulls().to_list())
    names |= {"Wang", "Wang, J", "J Wang", "JC Freytag", "Freytag, J.-C.", "Zhang Yunquan", "Yunquan Zhang", "Y. Zhang",
              "Zhang, Y.", "Jun-Hui Lu", "Junhui Lu", "J.-H. Lu", "J. Lu", "Lu Jun Hui", "Kenneth Alan Ross", "Kenneth Ross",
              "K. A. Ross", "K Ross", "Ross, Kenneth A.", "José García", "Jose Garcia", "J. García", "García, José María",
              "Y.F. Wang", "Wang, Yi-Fang", "Wang Yifang", "Wang, Y.", "Wang, Yu", "Wang, Y.-F.", "Wang, Z.Y.", "Wang, Zheng"}
    by_family: dict[str, list[str]] = {}
    for name in sorted(names):
        readings = parse_name(name).readings
        by_family.setdefault(readings[0].family if readings else "", []).append(name)

    class Evidence:
        def __init__(self, names: list[str]) -> None:
            self.names = names

    compared = 0
    for group in by_family.values():
        table = _compatibility_table(Evidence(group), np.arange(len(group)))
        for x, y in itertools.combinations(range(len(group)), 2):
            assert table[x, y] == table[y, x] == name_compatibility(group[x], group[y]), (group[x], group[y])
            compared += 1
    assert compared > 1000


def test_out_of_range_years_and_absurd_names_do_not_break_the_matcher():
    """A public API takes any Int64 year and any string: a scraped "40000", a year beside a missing
    one, 130 initials — resolved, not crashed (the linkage keeps years and initial counts in small
    integer types)."""
    schema = {"mention_id": pl.String, "name": pl.String, "paper_id": pl.String, "coauthors": pl.List(pl.String),
              "title": pl.String, "year": pl.Int64}

    def row(i, **kw):
        return {"mention_id": str(i), "name": "Jun Wang", "paper_id": f"p{i}", "coauthors": ["A Smith"],
                "title": "deep graphs", "year": 2001, **kw}

    many_initials = " ".join("ABCDEFGHIJKLMNOPQRSTUVWXYZ"[i % 26] + "." for i in range(130)) + " Wang"
    for rows in ([row(1), row(2, year=40000)], [row(1, year=None), row(2, year=32767)], [row(1), row(2, year=-5)],
                 [row(1, name=many_initials), row(2, name="J. Wang")]):
        result = match_authors(pl.DataFrame(rows, schema=schema))
        assert result.height == len(rows)



def _lab_corpus(people: int = 1200) -> list[dict]:
    """``people`` people of distinct names, each with a colleague of their own and five of forty
    frequent co-author keys (``wang j``, ``chen m``...: 150 lists each); every other one also
    writes with some ``Y. Zhang`` (Yan, Yu, Yang... Zhang: one key, ``zhang y``, on half of all
    lists, as ``zhang y`` is the commonest key of a 100k-profile corpus). 1,200 lists: enough to
    count how common a colleague is (``author_fit.MIN_COAUTHOR_LISTS``)."""
    syllables = "ka lo mi ne ru sa to vi da fe go hu".split()
    words = [(a + b + c).capitalize() for a in syllables for b in syllables for c in syllables]
    common = [f"{given} {family}" for family in "Wang Chen Yang Huang Zhao Wu Zhou Xu".split()
              for given in "Jun Min Qiang Lei Xin".split()]
    zhangs = ["Yan Zhang", "Yu Zhang", "Yang Zhang", "Yi Zhang", "Ying Zhang"]
    rows = []
    for k in range(people):
        coauthors = [f"Pia {words[-1 - k]}"] + [common[(k + 8 * i) % len(common)] for i in range(5)]
        if k % 2 == 0:
            coauthors.append(zhangs[k % len(zhangs)])
        rows.append({"mention_id": f"bg{k:04d}", "name": f"{words[k % 40]} {words[40 + k // 40]}", "paper_id": f"bg{k}",
                     "coauthors": coauthors, "year": 2000 + k % 20})
    return rows


def test_sharing_a_common_coauthor_key_says_less_than_sharing_a_rare_one():
    """Co-author agreement is term-frequency adjusted, as names and affiliations are: two mentions
    whose only shared co-author key is one that half the lists hold (``zhang y``) are less likely
    one person than two sharing a co-author nobody else lists, and that common key alone does not
    corroborate — while a rare key still does when a common one is shared beside it. Before, one
    shared co-author weighed the same whoever it was."""
    from pipelines.core.resolution.author_mentions import prepare_mentions
    from pipelines.core.resolution.authors import fit_author_model
    from pipelines.core.resolution.author_linkage import (compare_block, mention_evidence, pair_probabilities,
                                                          shared_coauthors)

    rows = _lab_corpus() + [
        {"mention_id": "c1", "name": "Hao Liu", "paper_id": "c1", "coauthors": ["Yu Zhang"], "year": 2010},
        {"mention_id": "c2", "name": "Hao Liu", "paper_id": "c2", "coauthors": ["Yan Zhang"], "year": 2011},
        {"mention_id": "r1", "name": "Jun Liu", "paper_id": "r1", "coauthors": ["Krzysztof Jabłoński"], "year": 2010},
        {"mention_id": "r2", "name": "Jun Liu", "paper_id": "r2", "coauthors": ["Krzysztof Jabłoński"], "year": 2011},
        {"mention_id": "m1", "name": "Li Liu", "paper_id": "m1", "coauthors": ["Krzysztof Jabłoński", "Yu Zhang"], "year": 2010},
        {"mention_id": "m2", "name": "Li Liu", "paper_id": "m2", "coauthors": ["Krzysztof Jabłoński", "Yang Zhang"], "year": 2011},
        # a frequent but not common key beside the commonest: still telling (it was summed away before)
        {"mention_id": "w1", "name": "Bo Liu", "paper_id": "w1", "coauthors": ["Jun Wang", "Yu Zhang"], "year": 2010},
        {"mention_id": "w2", "name": "Bo Liu", "paper_id": "w2", "coauthors": ["Jun Wang", "Yan Zhang"], "year": 2011},
    ]
    frame = mentions(rows)
    model = fit_author_model(frame)
    rarity = model.coauthor_rarity(["zhang y", "jabłonski k"])
    assert rarity["zhang y"] < -1 and rarity["jabłonski k"] > 0  # half the lists vs. one person's colleague
    m = prepare_mentions(frame)
    ev = mention_evidence(m.names, m.coauthor_keys, m.titles, m.years, m.venue, m.affiliation, model)
    at = {x: i for i, x in enumerate(m.ids)}

    def compared(a: str, b: str):
        pair = np.array([at[a], at[b]])
        levels = compare_block(ev, pair)
        shared = shared_coauthors(ev, pair)
        p = float(pair_probabilities(ev, model, levels, pair[:, None], shared.penalty)[0, 1])
        return int(levels["coauthors"][0, 1]), p, int(shared.telling[0, 1])

    common, rare, both, frequent = compared("c1", "c2"), compared("r1", "r2"), compared("m1", "m2"), compared("w1", "w2")
    assert common[0] == rare[0] == 3  # one shared co-author key on short lists: the same level
    assert common[1] < rare[1]
    assert (common[2], rare[2], both[2], frequent[2]) == (0, 1, 1, 1)
    assert model.coauthor_rarity(["wang j"])["wang j"] + rarity["zhang y"] < 0


def test_a_common_coauthor_never_weighs_less_than_no_shared_coauthor():
    """However common the shared keys, sharing them weighs at least what sharing none does."""
    from pipelines.core.resolution.authors import fit_author_model
    from pipelines.core.resolution.author_linkage import coauthor_adjustment

    model = fit_author_model(mentions(_lab_corpus()))
    none_shared = model.linkage.bayes_factors("coauthors")[0]
    level = np.array([3, 4, 3])
    adjusted = model.linkage.log2_bayes_factor("coauthors", level) + coauthor_adjustment(model, level, np.array([-50.0, -50.0, -0.5]))
    assert adjusted[0] == adjusted[1] == none_shared
    assert adjusted[2] == model.linkage.bayes_factors("coauthors")[3] - 0.5


def test_homonyms_sharing_only_a_common_coauthor_key_stay_two_people():
    """Two of the people called Hao Liu, each with a colleague of their own, both write with some
    Zhang Y. (``Yu Zhang``, ``Yan Zhang``: one key, held by half the lists here). That shared key
    does not corroborate a merge; their own colleagues still join each one's mentions. (Before:
    the shared ``zhang y`` corroborated the pairs across them and the two became one.)"""
    rows = _lab_corpus() + [  # other people called Hao Liu: the name is a common one
        {"mention_id": f"h{k}", "name": "Hao Liu", "paper_id": f"h{k}", "coauthors": [f"Rui {surname}"], "year": 2000 + k}
        for k, surname in enumerate("Abbott Baker Carter Dawson Ellis Fisher".split())
    ] + [
        {"mention_id": "a1", "name": "Hao Liu", "paper_id": "a1", "coauthors": ["Ivo Marchetti", "Yu Zhang"], "year": 2010},
        {"mention_id": "a2", "name": "Hao Liu", "paper_id": "a2", "coauthors": ["Ivo Marchetti"], "year": 2012},
        {"mention_id": "b1", "name": "Hao Liu", "paper_id": "b1", "coauthors": ["Ola Fenwick", "Yan Zhang"], "year": 2011},
        {"mention_id": "b2", "name": "Hao Liu", "paper_id": "b2", "coauthors": ["Ola Fenwick"], "year": 2013},
    ]
    author = author_of(match_authors(mentions(rows)))
    assert author["a1"] == author["a2"]
    assert author["b1"] == author["b2"]
    assert author["a1"] != author["b1"]


def test_the_author_model_keeps_its_coauthor_frequencies_between_nights():
    """The co-author counts are part of the stored model (``cache.author_model``), so an incremental
    night weighs a shared co-author as the full night did; a model stored before them weighs every
    co-author alike (no adjustment) rather than failing."""
    from pipelines.core.resolution.authors import fit_author_model
    from pipelines.core.resolution.author_linkage import model_from_rows, model_rows

    model = fit_author_model(mentions(_lab_corpus()))
    assert model.coauthor_counts["zhang y"] == 600
    rows = model_rows(model)
    again = model_from_rows(rows["part"], rows["key"], rows["value"])
    assert again.coauthor_counts == model.coauthor_counts
    assert again.coauthor_rarity(["zhang y", "nowak q"]) == model.coauthor_rarity(["zhang y", "nowak q"])
    old = [(p, k, v) for p, k, v in zip(rows["part"], rows["key"], rows["value"]) if p != "coauthor"]
    stored_before = model_from_rows(*map(list, zip(*old)))
    assert stored_before.coauthor_rarity(["zhang y", "nowak q"]) == {"zhang y": 0.0, "nowak q": 0.0}


def test_a_few_pages_do_not_say_how_common_a_colleague_is():
    """Below ``MIN_COAUTHOR_LISTS`` short co-author lists nothing is counted and no co-author is
    adjusted: on a few profiles' pages the owner is on every list, the commonest key by far, and
    their co-authors' bylines must still be joined by sharing them."""
    from pipelines.core.resolution.authors import fit_author_model

    few = fit_author_model(mentions(_lab_corpus(people=200)))
    assert few.coauthor_counts == {}
    assert few.coauthor_rarity(["zhang y"]) == {"zhang y": 0.0}
