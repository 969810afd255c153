"""`didax.export`: exported programs, their encoding, and symbolic dimensions."""
