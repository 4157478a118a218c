"""The reference host: an agent loop that fires every hook at its place, with its combine rule."""
