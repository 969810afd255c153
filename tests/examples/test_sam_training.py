"""SAM example: both runs learn the digits, and SAM ends in a flatter place."""
