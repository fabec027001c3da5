"""Crowd platforms: who may enter a study, which browser a participant belongs to, what each exit earns."""
