"""Comparison tables and plots assembled from the per-job metric files."""
