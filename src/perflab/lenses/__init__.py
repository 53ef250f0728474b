"""The lenses: one package per lens (measure, analyse, render), registered in `registry`."""
