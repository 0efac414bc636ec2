"""Checks that cut across blocks (names, values, networks, regions, the catalog, versions and their calendars,
admission, upkeep): each reads the whole validated spec and returns every problem it finds."""
