"""Pricing service of the shop."""
