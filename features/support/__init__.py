"""Test support shared by Behave steps (fakes, runners, log capture)."""
