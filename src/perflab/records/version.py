"""perflab's version, in a module of its own so any layer can name it without importing the
package's public face (which imports the whole library)."""

__version__ = "0.1.0"
