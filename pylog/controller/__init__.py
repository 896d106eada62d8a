"""The controller: event queue, cluster context, elections, state machines, reassignment."""
