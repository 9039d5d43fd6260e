"""Stateful SSH emulators of network operating systems, for deploy-pipeline tests on machines where no real
switch, cEOS or sonic-vs image can run. `eos` emulates an Arista EOS CLI."""
