"""Agents: anything that plays a seat through the same view and actions a person has."""
