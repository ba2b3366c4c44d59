"""Views of the builds wing's runs (``evaluation.builds``), each read from its report alone: ``text`` (the
terminal's and a pull request's tables: ``compare_text``, ``sweep_text``, ``sweep_markdown``,
``matrix_text``), the pages (``compare_page``, ``sweep_page``, ``matrix_page``: each a section for the run
page's Chunking tab and a page of its own) and a matrix's JSON and CSV files (``export``). Each names its
measures as ``evaluation.measures`` prints them and escapes with ``report.page.format.esc``.
"""
