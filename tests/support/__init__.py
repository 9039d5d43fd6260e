"""Test doubles the tests drive, kept out of the package (the wheel ships netgen* only):
`eos_emulator`, a stateful Arista EOS switch behind real SSH for the deploy tests (no switch, cEOS
or sonic-vs image runs where they run), and `sonic_faults`, the faults injected into the lab's
SONiC stand-in through its hooks."""
