"""`python -m netgen.cli`."""

from netgen.cli import main

main()
