"""Verifier passes: each checks one IR property and returns the program unchanged."""
