"""The HTML page's parts: one module per section or group (``top``, ``picks``, ``chart``, ``table``,
``history``, ``details``, ``questions``, ``glossary``, ``footer``), the facts they share (``context.Page``),
the helpers they write with (``format``), and the order they appear in, tab by tab (``tabs``).

``report.html.render_html`` is the entry point; import from there.
"""
