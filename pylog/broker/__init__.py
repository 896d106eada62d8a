"""The broker process: asyncio server, API handlers, replica manager, replica fetchers."""
