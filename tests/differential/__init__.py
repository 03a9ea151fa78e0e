"""Differential fuzzing against the shipped kube-scheduler (issue: fidelity on clusters nobody wrote)."""
