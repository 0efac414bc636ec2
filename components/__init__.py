"""Pulumi components, one per file. Import the one you need: platform SDKs load only when used."""
