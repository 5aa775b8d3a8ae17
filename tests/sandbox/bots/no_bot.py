"""Imports fine but defines no Bot subclass."""

VALUE = 42
