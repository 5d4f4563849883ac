"""Result stores: saved sessions, the history of sessions, the records of built images and the
checksums that guard every archive."""
