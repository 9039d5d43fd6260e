"""The fabric report (`netgen report`): one self-contained HTML page."""
