"""What the lenses say together about one pair of variants, read from their comparisons."""
