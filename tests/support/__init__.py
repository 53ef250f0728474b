"""Builders and fakes shared by tests: stores, runs, fake processes and repositories, tool
output. No tests here: a test file imports what it shares from this package, never from
another test file, so each test file can change or go without breaking another."""
