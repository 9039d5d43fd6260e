"""The cabling plan (`netgen cabling`): every cable of the fabric, in walking order."""
