"""The primitives of batched-COO sparse arrays (`didax.experimental.sparse`) and their rules."""
