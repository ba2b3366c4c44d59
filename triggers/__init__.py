"""Client functions that start evaluate_golden: golden_changed (Event Grid) and evaluate_now (HTTP POST)."""
