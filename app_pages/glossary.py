"""Glossary: the analyst's terms the pages keep (F_j, τ, r, q, FDR, Hamming distance...) in plain words."""

import streamlit as st

from ui.glossary import glossary, outcome_words
from ui.text import plain

st.title("Glossary")
words = outcome_words()
st.caption(plain(
    "The pages lead with readings in the data's own words; the terms below are the analyst's, for those who know "
    "the FLEX paper: the sidebar's switch \"Show the paper's terms\" puts them beside the plain words."
    + (f" The outcomes are named as this dataset names them: {words[0]} and {words[1]}." if words else "")
))
st.markdown("\n".join(f"- **{plain(term)}**: {plain(meaning)}" for term, meaning in glossary(*(words or ()))))
