"""A repository's commits as variants: finding the repository, checking out and building a
commit (with a cache of checkouts and builds), and bundling commits for another machine."""
