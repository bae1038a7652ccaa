"""The oracle of topic matching for the reference's indexes, and the strategies that feed
them topic names and topic filters.

``spec_matches`` is written here from section 4.7 alone, one level at a time, with nothing
of pubproof's: the obviously-correct form the fast indexes are compared with. The model's
own ``matches(topic_filter, topic_name)`` (issue 34, being written in ``model/``) is to
replace it: then the assignment ``matches = spec_matches`` below becomes that one import,
and every test of the indexes compares them with the model.
"""

from __future__ import annotations

from hypothesis import strategies as st


def spec_matches(topic_filter: str, topic_name: str) -> bool:
    """Whether the valid, non-shared ``topic_filter`` matches the valid ``topic_name``."""
    # [MQTT-4.7.2-1] filters starting with a wildcard match no topic name starting with '$'
    if topic_name.startswith("$") and topic_filter.startswith(("#", "+")):
        return False
    filter_levels = topic_filter.split("/")
    name_levels = topic_name.split("/")
    for i, level in enumerate(filter_levels):
        if level == "#":
            # the parent level and any number of child levels: whatever remains, or nothing
            return True
        if i == len(name_levels):
            return False
        # '+' is any one level, the empty one too; anything else compares exactly
        if level != "+" and level != name_levels[i]:
            return False
    return len(filter_levels) == len(name_levels)


matches = spec_matches

#: levels that collide often, with the cases the rules are about: empty, '$', case,
#: a precomposed and a decomposed 'é' (no normalisation), a space, an astral character
LEVELS = ["a", "b", "", "A", "é", "e\u0301", "$", "$SYS", "x y", "🌡"]
_level_chars = st.characters(blacklist_categories=["Cs"], blacklist_characters="\x00/+#")
name_levels = st.one_of(st.sampled_from(LEVELS), st.text(_level_chars, max_size=3))

topic_names = st.lists(name_levels, min_size=1, max_size=5).map("/".join).filter(bool)


@st.composite
def topic_filters(draw: st.DrawFn) -> str:
    """A valid, non-shared topic filter: levels, '+' anywhere, '#' only last."""
    levels = draw(
        st.lists(st.one_of(name_levels, st.just("+")), min_size=1, max_size=5),
    )
    if draw(st.booleans()):
        levels.append("#")
    if len(levels) > 1 and draw(st.booleans()):
        levels = levels[1:]  # filters such as "#" and "+/#" alone
    text = "/".join(levels)
    return text if text else "+"


share_names = st.one_of(
    st.sampled_from(["g", "group", "é"]),
    st.text(
        st.characters(blacklist_categories=["Cs"], blacklist_characters="\x00/+#"),
        min_size=1,
        max_size=4,
    ),
)


@st.composite
def subscribed_filters(draw: st.DrawFn) -> str:
    """A topic filter as a client sends it: a plain one, or a 5.0 ``$share/`` one."""
    topic_filter = draw(topic_filters())
    if draw(st.integers(0, 3)) == 0:
        return f"$share/{draw(share_names)}/{topic_filter}"
    return topic_filter
