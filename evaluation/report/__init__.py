"""Views of a report: the plain-text table and picks, and the TREC run / qrels / CSV exports."""
