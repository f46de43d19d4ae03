"""What a key costs: the memory model of each server generation, cluster slots."""
