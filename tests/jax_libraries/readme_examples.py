"""The code examples of the libraries' own READMEs (as their installed package metadata
holds them), run in order in one namespace per library, as a reader of the README would;
prints, per example, whether it ran and the error type if not, as JSON. Some examples are
fragments (shell lines, code needing names the README never defines): they fail under JAX
too, and the test compares the outcomes. Run under real JAX, or under didax with --didax."""
import contextlib
import io
import json
import re
import sys
from importlib import metadata

if "--didax" in sys.argv:
    import didax
    didax.install_as_jax()

def _source(block: str) -> str:
    """A block's code; a doctest-style block (`>>> ` and `... ` prompts, output lines) gives
    the lines after its prompts."""
    lines = block.splitlines()
    if not any(line.lstrip().startswith(">>>") for line in lines):
        return block
    code = [line.lstrip()[4:] for line in lines
            if line.lstrip().startswith((">>> ", "... ")) or line.strip() in (">>>", "...")]
    return "\n".join(code) + "\n"


LIBRARIES = ["blackjax", "diffrax", "distrax", "equinox", "flax", "lineax", "numpyro",
             "optax", "optimistix"]
out = {}
for library in LIBRARIES:
    readme = metadata.metadata(library).get_payload() or ""
    namespace = {"__name__": "__main__"}
    for i, code in enumerate(re.findall(r"```(?:python|py)\n(.*?)```", readme, re.S)):
        printed = io.StringIO()
        try:
            with contextlib.redirect_stdout(printed):
                exec(compile(_source(code), f"<{library} README example {i}>", "exec"),
                     namespace)
            out[f"{library}_{i}"] = "ran"
        except BaseException as e:  # noqa: BLE001  (fragments fail: the outcome is the datum)
            out[f"{library}_{i}"] = type(e).__name__
print(json.dumps(out))
