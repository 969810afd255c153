"""Devices, shardings and running on many of them: pmap, shard_map, processes."""
