"""Notebook widgets: graph view, live summary dashboard, timeline, cluster, run controls."""
