"""Coordinators hosted by every broker: the group coordinator (`group/`)."""
