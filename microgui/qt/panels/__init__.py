"""The dock panels of the main window; each talks to the controller, never to another panel."""

__all__: list[str] = []
