"""One colour per placement case (1, 1u, 2, 3a, 3b, 2-3a), the same in every figure that shows
cases: the pair study's and the placement advice's. Dark2's hues, distinguishable for the common
colour-vision deficiencies and in greyscale."""

CASE_COLOR = {
    "1": "#6b6b6b",
    "1u": "#a6761d",
    "2": "#d95f02",
    "3a": "#1b9e77",
    "3b": "#7570b3",
    "2-3a": "#e7298a",
}
