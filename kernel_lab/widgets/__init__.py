"""ipywidgets views of results. Only this package (and magics.py) imports ipywidgets."""
