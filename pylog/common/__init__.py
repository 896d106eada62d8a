"""Shared by every layer: configuration definitions, .properties files, small value types."""
