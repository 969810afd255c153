"""A Transformer language model trained with data and tensor parallelism on a 2x2 mesh.

The mesh has two axes. 'data' splits each batch of sequences. 'model' splits every layer the
Megatron way: the attention heads (the columns of wq, wk and wv, the rows of wo) and the MLP's
hidden units (the columns of w1 and b1, the rows of w2), with one `psum` over 'model' after
each attention and each MLP. Embeddings, layer norms and the output head are whole on every
device. The per-device loss is written once; `shard_map` runs it on the mesh, and `jit` of its
`value_and_grad` with Adam trains the global parameters. Unsharded (no mesh), the same
function is the one-device model, and the two give the same numbers.

The task: each sequence repeats a random motif, so after its first motif every next token is
predictable by looking one motif back, which attention learns.

    python examples/transformer_2d_mesh.py               # one process of 4 devices
    mpiexec -n 2 python examples/transformer_2d_mesh.py  # two processes of 2 devices each
    python examples/transformer_2d_mesh.py --one-device  # the same model on one device

(`mpiexec` comes with `pip install "didax[mpi]"`.) Process 'data' = p holds row p of the
mesh: its half of every batch, and all of the parameters. Only process 0 prints.
"""
import argparse
import os
import time

import numpy as np

import didax as jax
import didax.numpy as jnp
from didax import lax, nn, optim

# The processes MPI started (its launcher says so in the environment)
PROCESSES = int(os.environ.get("PMI_SIZE") or os.environ.get("OMPI_COMM_WORLD_SIZE") or 1)

VOCAB, SEQ, MOTIF = 32, 32, 6
D_MODEL, HEADS, HIDDEN, LAYERS = 64, 4, 256, 2
LN_EPS = 1e-5

# How each parameter is split over the mesh (the names not listed here are whole).
MODEL_SPLIT = {"wq": (None, "model"), "wk": (None, "model"), "wv": (None, "model"),
               "wo": ("model", None), "w1": (None, "model"), "b1": ("model",),
               "w2": ("model", None)}


def init_params(seed=0):
    rng = np.random.default_rng(seed)

    def normal(*shape, scale):
        return jnp.asarray(rng.standard_normal(shape).astype(np.float32) * scale)

    params = {"embed": normal(VOCAB, D_MODEL, scale=0.5), "pos": normal(SEQ, D_MODEL, scale=0.1),
              "head": normal(D_MODEL, VOCAB, scale=D_MODEL ** -0.5),
              "ln_g": jnp.ones(D_MODEL), "ln_b": jnp.zeros(D_MODEL)}
    for i in range(LAYERS):
        params[f"{i}.ln1_g"], params[f"{i}.ln1_b"] = jnp.ones(D_MODEL), jnp.zeros(D_MODEL)
        params[f"{i}.ln2_g"], params[f"{i}.ln2_b"] = jnp.ones(D_MODEL), jnp.zeros(D_MODEL)
        for name in ("wq", "wk", "wv", "wo"):
            params[f"{i}.{name}"] = normal(D_MODEL, D_MODEL, scale=D_MODEL ** -0.5)
        params[f"{i}.w1"] = normal(D_MODEL, HIDDEN, scale=D_MODEL ** -0.5)
        params[f"{i}.b1"] = jnp.zeros(HIDDEN)
        params[f"{i}.w2"] = normal(HIDDEN, D_MODEL, scale=HIDDEN ** -0.5)
        params[f"{i}.b2"] = jnp.zeros(D_MODEL)
    return params


def param_specs(params):
    return {k: jax.P(*MODEL_SPLIT.get(k.split(".")[-1], ())) for k in params}


def batches(seed, global_batch):
    """Endless batches of sequences (global_batch, SEQ + 1): a random motif repeated."""
    rng = np.random.default_rng(seed)
    reps = -(-(SEQ + 1) // MOTIF)
    while True:
        motifs = rng.integers(0, VOCAB, (global_batch, MOTIF))
        yield np.tile(motifs, reps)[:, :SEQ + 1].astype(np.int32)


def layer_norm(x, g, b):
    centred = x - x.mean(-1, keepdims=True)
    return centred * lax.rsqrt((centred ** 2).mean(-1, keepdims=True) + LN_EPS) * g + b


def device_loss(params, tokens, model_axis=None, data_axis=None):
    """The mean next-token cross-entropy of `tokens`. On the mesh, `params` and `tokens` are
    this device's blocks, and the partial sums of each layer meet over `model_axis`."""
    def meet(x):
        return x if model_axis is None else lax.psum(x, model_axis)

    inputs, targets = tokens[:, :-1], tokens[:, 1:]
    batch = inputs.shape[0]
    x = params["embed"][inputs] + params["pos"]
    causal = jnp.tril(jnp.ones((SEQ, SEQ), bool))
    head_dim = D_MODEL // HEADS
    for i in range(LAYERS):
        p = {k.split(".", 1)[1]: v for k, v in params.items() if k.startswith(f"{i}.")}
        h = layer_norm(x, p["ln1_g"], p["ln1_b"])
        heads = p["wq"].shape[1] // head_dim  # (this device's heads)

        def split(t, heads=heads):
            return t.reshape(batch, SEQ, heads, head_dim).transpose(0, 2, 1, 3)

        q, k, v = split(h @ p["wq"]), split(h @ p["wk"]), split(h @ p["wv"])
        scores = jnp.where(causal, q @ k.swapaxes(-1, -2) / np.sqrt(head_dim), -1e30)
        mixed = (nn.softmax(scores) @ v).transpose(0, 2, 1, 3).reshape(batch, SEQ, -1)
        x = x + meet(mixed @ p["wo"])
        h = nn.gelu(layer_norm(x, p["ln2_g"], p["ln2_b"]) @ p["w1"] + p["b1"])
        x = x + meet(h @ p["w2"]) + p["b2"]
    logits = layer_norm(x, params["ln_g"], params["ln_b"]) @ params["head"]
    logp = nn.log_softmax(logits)
    loss = -jnp.take_along_axis(logp, targets[..., None], axis=-1).mean()
    return loss if data_axis is None else lax.pmean(loss, data_axis)


def make_loss(params, mesh=None):
    """The loss of (params, tokens): on `mesh`'s devices, or on one device."""
    if mesh is None:
        return device_loss
    return jax.shard_map(
        lambda p, t: device_loss(p, t, "model", "data"), mesh=mesh,
        in_specs=(param_specs(params), jax.P("data")), out_specs=jax.P())


def make_train_step(loss, optimizer):
    @jax.jit
    def step(params, opt_state, tokens):
        value, grads = jax.value_and_grad(loss)(params, tokens)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        return optim.apply_updates(params, updates), opt_state, value

    return step


def my_rows(tokens):
    """This process's rows of a global batch (all of them in one process)."""
    per = len(tokens) // jax.process_count()
    return tokens[jax.process_index() * per:][:per]


def main(steps=300, global_batch=16, learning_rate=3e-3, seed=0, one_device=False):
    """Trains; returns the training losses, the loss on a held-out batch, the time, and the
    parameters."""
    params = init_params(seed)
    mesh = None if one_device else jax.make_mesh((2, 2), ("data", "model"))
    loss = make_loss(params, mesh)
    optimizer = optim.adam(learning_rate)
    opt_state = optimizer.init(params)
    step = make_train_step(loss, optimizer)
    data = batches(seed, global_batch)
    losses = []
    start = time.perf_counter()
    for _ in range(steps):
        params, opt_state, value = step(params, opt_state, my_rows(next(data)))
        losses.append(float(value))
    seconds = time.perf_counter() - start
    held_out = next(batches(seed + 1, global_batch))
    held_out_loss = float(jax.jit(loss)(params, my_rows(held_out)))
    return {"devices": 1 if one_device else jax.device_count(),
            "processes": jax.process_count(), "losses": losses, "held_out_loss": held_out_loss,
            "seconds": seconds, "params": params}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--one-device", action="store_true",
                        help="train the same model unsharded, on one device")
    parser.add_argument("--steps", type=int, default=300)
    args = parser.parse_args()
    jax.config.update("didax_num_cpu_devices", 4 // PROCESSES)  # (the mesh's 4 in all)
    if PROCESSES > 1:
        jax.distributed.initialize()
    result = main(steps=args.steps, one_device=args.one_device)
    if jax.process_index() == 0:
        where = ("one device" if args.one_device else
                 f"a 2x2 mesh of {result['devices']} devices in {result['processes']} "
                 "process(es)")
        losses = result["losses"]
        print(f"Transformer on {where}: {args.steps} steps in {result['seconds']:.1f} s "
              f"({1e3 * result['seconds'] / args.steps:.1f} ms a step)")
        print(f"training loss {losses[0]:.4f} -> {losses[-1]:.4f}, "
              f"held-out loss {result['held_out_loss']:.6f}")
