"""The command line: parse into typed options, call the library, print, exit."""
