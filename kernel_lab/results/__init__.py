"""What the API returns and how it shows itself: text in a terminal, HTML and widgets in a notebook.

Nothing below this floor imports it.
"""
