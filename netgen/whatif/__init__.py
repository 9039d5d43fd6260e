"""What-if studies on the fabric (`netgen whatif`)."""
