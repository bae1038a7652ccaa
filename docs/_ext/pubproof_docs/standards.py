"""The OASIS standards the site's 3.1.1 and 5.0 statements come from: where to read each
in full, and its copyright notice, shown wherever the site lists their normative
statements or quotes their words.

The notices are the standards' own (the footer of every page of ``mqtt-v3.1.1-os`` and of
``mqtt-v5.0-os``). The site quotes the standards only where the wording was checked
against the OASIS text: the model's rules quote them, nothing is paraphrased as a quote.
"""

from __future__ import annotations

from dataclasses import dataclass

from pubproof_docs.rst import esc


@dataclass(frozen=True, slots=True, kw_only=True)
class Standard:
    """One OASIS standard: its title, date, HTML address and copyright notice."""

    edition: str
    title: str
    date: str
    url: str
    notice: str

    def __post_init__(self) -> None:
        if not self.url.startswith("https://docs.oasis-open.org/mqtt/"):
            raise ValueError(f"not an OASIS MQTT standard's address: {self.url}")


STANDARDS = {
    "3.1.1": Standard(
        edition="3.1.1", title="MQTT Version 3.1.1, OASIS Standard", date="29 October 2014",
        url="https://docs.oasis-open.org/mqtt/mqtt/v3.1.1/os/mqtt-v3.1.1-os.html",
        notice="Copyright © OASIS Open 2014. All Rights Reserved.",
    ),
    "5.0": Standard(
        edition="5.0", title="MQTT Version 5.0, OASIS Standard", date="07 March 2019",
        url="https://docs.oasis-open.org/mqtt/mqtt/v5.0/os/mqtt-v5.0-os.html",
        notice="Copyright © OASIS Open 2019. All Rights Reserved.",
    ),
}  # fmt: skip


def oasis_block(*editions: str) -> str:
    """A paragraph (reStructuredText) naming the standards of ``editions`` with a link to
    each and its copyright notice."""
    parts = [
        f"`{esc(s.title)}, {esc(s.date)} <{s.url}>`__ ({esc(s.notice)})"
        for s in (STANDARDS[e] for e in editions)
    ]
    return (
        ".. rst-class:: pp-oasis\n\n"
        "The standards' own words: "
        + "; ".join(parts)
        + ". The MQTT 3.1.1 and 5.0 ids on this page are the standards' own; each "
        "statement reads in full, in its own words, there.\n"
    )
