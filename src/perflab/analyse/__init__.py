"""store -> analyse: a stored run read back and analysed (run.py: each lens's analysis, the
outputs judged, the sections), two runs compared (compare.py), and what the lenses say together
about one pair of variants (explanation, same work, designs, places)."""
