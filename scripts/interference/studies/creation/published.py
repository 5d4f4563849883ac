"""Paper 001's Table I (seeds/001, Section IV-D): time to create nested containers, parents ×
children, mean seconds and σ as published (Docker 1.0.1 in Docker, 12-core Xeon, 64 GB).
Keys: (children per parent, parents). Transcribed from the paper; "-" cells are absent."""

SOURCE = "paper 001, Table I (time to create nested containers with different ratios of parent to children)"

# children -> [(parents, mean s, sigma s), ...]
_ROWS = {
    1: [(1, 9, 1.0), (2, 15, 0.5), (4, 17, 0.5), (8, 21, 0.4), (16, 72, 1.3), (32, 200, 0.3), (64, 432, 10.5),
        (128, 1475, 146.5), (256, 2313, 160.8)],
    2: [(1, 9, 0.5), (2, 10, 0.51), (4, 12, 0.43), (8, 25, 2.0), (16, 96, 4.0), (32, 239, 2.5), (64, 475, 14.5),
        (128, 1518, 163.0)],
    4: [(1, 10, 0.5), (2, 12, 0.5), (4, 17, 0.5), (8, 37, 2.0), (16, 113, 8.0), (32, 255, 0.6), (64, 514, 12.0)],
    8: [(1, 12, 0.5), (2, 14, 0.53), (4, 22, 3.56), (8, 64, 1.5), (16, 131, 6.1), (32, 278, 7.0)],
    16: [(1, 16, 1.0), (2, 22, 1.0), (4, 35, 1.5), (8, 66, 0.5), (16, 139, 1.5)],
    32: [(1, 27, 1.5), (2, 40, 0.5), (4, 47, 4.81), (8, 92, 3.5)],
    64: [(1, 46, 2.0), (2, 46, 2.0), (4, 69, 2.02)],
    128: [(1, 65, 3.0), (2, 77, 1.0)],
    256: [(1, 111, 3.5)],
}  # fmt: skip

TABLE_1 = {
    (children, parents): (mean, sd) for children, cells in _ROWS.items() for parents, mean, sd in cells
}

# Section IV-C, in the text: one nested container (parent + child) ≈ 8 × one regular container;
# the child image load ≈ 6.2 s on average; with a pre-loaded volume 8 s dropped to 1.7 s.
NESTED_OVER_REGULAR = 8.0
IMAGE_LOAD_S = 6.2
LOAD_VS_PRELOADED_S = (8.0, 1.7)
