"""How runs run: the job's executor chosen by configuration, the guard that keeps one writer
at a time and clears dead runs (Dagster-aware), and a failure's cause in one line
(``failures.py``, plain)."""
