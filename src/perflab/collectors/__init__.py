"""Lenses: each collector checks availability up front, wraps only the measured region and
returns typed results."""
