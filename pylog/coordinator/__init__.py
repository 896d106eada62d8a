"""Coordinators hosted by every broker: the group coordinator (`group/`) and the transaction coordinator (`transaction/`)."""
