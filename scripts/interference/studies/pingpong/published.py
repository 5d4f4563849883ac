"""Paper 003's published figures (seeds/003, Section IV): its Table I (%RSD of the transfer
rates per experiment, min/avg/max, and the data moved) and the ratios its text states for
Figure 3 (AWS m3.medium, one core per VM, Weave's first version, ApacheBench, 2015).
Transcribed from the paper; Figure 2's absolute rates are not given as numbers."""

SOURCE = "paper 003, Table I and Section IV (AWS m3.medium, Weave 0.9, 2015)"

# Table I: experiment -> (data moved GB, min %RSD, avg %RSD, max %RSD)
TABLE_I = {
    "Reference": (90, 0.9, 2.9, 15.9),
    "Cross Regional": (19, 0.9, 14.9, 28.7),
    "Docker": (57, 0.8, 2.0, 10.3),
    "Docker SDVN": (75, 0.4, 11.3, 21.2),
    "Docker Encrypted": (75, 0.5, 10.9, 16.2),
}
# Our layer whose %RSD row is compared with each of Table I's.
TABLE_I_LAYER = {
    "Reference": "reference",
    "Docker": "container",
    "Docker SDVN": "overlay-userspace",
    "Docker Encrypted": "encrypted",
}

# The findings as the text states them: (layer, baseline) -> (ratio for small m, for large m,
# where "large" starts in bytes, the paper's words).
SMALL_LARGE_SPLIT = 100_000
FINDINGS = {
    ("container", "reference"): (0.80, 0.90, "containers: 80 % (m < 100 kB) to 90 % (m > 100 kB)"),
    ("overlay-userspace", "reference"): (
        0.60,
        0.25,
        "SDVN: 60 % for small messages, about 25 % above 100 kB",
    ),
    ("encrypted", "overlay-userspace"): (
        1.00,
        0.90,
        "encryption: negligible for small messages, about 90 % for large",
    ),
}
