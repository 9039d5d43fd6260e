"""NOS drivers for the deploy pipeline (one module per NOS)."""
