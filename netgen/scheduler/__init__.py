"""Scheduler exports (`netgen scheduler`): the fabric as Slurm, Kubernetes and topograph see it."""
