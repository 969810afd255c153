"""Jaxpr printing: golden strings, verbatim from JAX 0.10.2's printer for the same programs.

The one deliberate difference: didax has an `expand_dims` primitive where JAX emits a
`broadcast_in_dim` (its expected string below is didax's own).
"""
import numpy as np
import pytest

import didax as jax
import didax.numpy as jnp
from didax import lax
from didax._src import ir

f32 = lambda *s: np.ones(s, np.float32)  # noqa: E731

CASES = [
    ("sincos", lambda x: jnp.sin(jnp.cos(x)), (1.0,)),
    ("scalar_mul", lambda x: x * 2.0, (f32(3, 4),)),
    ("int_mul", lambda x: x * 2, (np.ones((3, 4), np.int32),)),
    ("const", lambda x: x + np.ones(3, np.float32), (f32(3),)),
    ("bcast", lambda x, y: x * y, (f32(3, 4), f32(4))),
    ("weakconv", lambda x: jnp.asarray(np.zeros(3, np.float32)) + x, (1.0,)),
    ("chain", lambda x: jnp.sin(x) ** 2 + jnp.exp(x) / 3, (f32(4),)),
    ("jvp", lambda x, t: jax.jvp(lambda y: jnp.sin(y) * y, (x,), (t,)), (2.0, 1.0)),
    ("many", lambda a, b, c, d: (a * b + c * d - a / b + jnp.tanh(c) * jnp.log(d)) ** 3,
     (f32(10, 20, 30),)*4),
    ("slice", lambda x: lax.slice(x, (1, 0), (3, 4), (1, 2)), (f32(5, 6),)),
    ("pad", lambda x: lax.pad(x, 0.0, ((1, 2, 0), (0, 1, 1))), (f32(5, 6),)),
    ("reshape", lambda x: lax.transpose(lax.reshape(x, (2, 2)), (1, 0)), (f32(4),)),
    ("concat", lambda x: lax.concatenate([x, x, x], 0), (f32(3),)),
    ("iota", lambda x: lax.convert_element_type(lax.iota(np.int32, 3), np.float32)
     + lax.rev(x, (0,)), (f32(3),)),
    ("longnames", lambda *xs: sum(xs[1:], xs[0]), (f32(3),)*30),
    ("select", lambda p, x: lax.select_n(p, x, -x), (np.ones(3, bool), f32(3))),
    ("clamp", lambda x: lax.clamp(0.0, x, 1.0), (f32(3),)),
    ("ipow", lambda x: lax.integer_pow(x, 3) + lax.pow(x, 0.5), (f32(3),)),
    ("bcast2", lambda x: lax.broadcast_in_dim(x, (2, 3, 4), (1, 2)), (f32(3, 4),)),
    ("expand", lambda x: lax.squeeze(lax.expand_dims(x, (0,)), (0,)), (f32(3, 4),)),
    ("cmp", lambda x: (x > 1) & (x < 2) | ~(x == 0), (f32(3),)),
    ("topk", lambda x: lax.top_k(x, 2), (f32(3, 4),)),
    ("stopg", lambda x: lax.stop_gradient(x) ** 3.0, (f32(3),)),
]

EXPECTED = {
    # exactly 80 columns on one line: JAX breaks it (the closing " }" counts)
    'topk': (
        '{ lambda ; a:f32[3,4]. let\n'
        '    b:f32[3,2] c:i32[3,2] = top_k[axis=1 k=2] a\n'
        '  in (b, c) }'
    ),
    'sincos': (
        '{ lambda ; a:f32[]. let b:f32[] = cos a; c:f32[] = sin b in (c,) }'
    ),
    'scalar_mul': (
        '{ lambda ; a:f32[3,4]. let b:f32[3,4] = mul a 2.0:f32[] in (b,) }'
    ),
    'int_mul': (
        '{ lambda ; a:i32[3,4]. let b:i32[3,4] = mul a 2:i32[] in (b,) }'
    ),
    'const': (
        '{ lambda a:f32[3]; b:f32[3]. let c:f32[3] = add b a in (c,) }'
    ),
    'bcast': (
        '{ lambda ; a:f32[3,4] b:f32[4]. let\n'
        '    c:f32[1,4] = broadcast_in_dim[broadcast_dimensions=(1,)] b\n'
        '    d:f32[3,4] = mul a c\n'
        '  in (d,) }'
    ),
    'weakconv': (
        '{ lambda a:f32[3]; b:f32[]. let\n'
        '    c:f32[] = convert_element_type[new_dtype=float32 weak_type=False] b\n'
        '    d:f32[3] = add a c\n'
        '  in (d,) }'
    ),
    'chain': (
        '{ lambda ; a:f32[4]. let\n'
        '    b:f32[4] = sin a\n'
        '    c:f32[4] = integer_pow[y=2] b\n'
        '    d:f32[4] = exp a\n'
        '    e:f32[4] = div d 3.0:f32[]\n'
        '    f:f32[4] = add c e\n'
        '  in (f,) }'
    ),
    'jvp': (
        '{ lambda ; a:f32[] b:f32[]. let\n'
        '    c:f32[] = sin a\n'
        '    d:f32[] = cos a\n'
        '    e:f32[] = mul b d\n'
        '    f:f32[] = mul c a\n'
        '    g:f32[] = mul e a\n'
        '    h:f32[] = mul c b\n'
        '    i:f32[] = add_any g h\n'
        '  in (f, i) }'
    ),
    'many': (
        '{ lambda ; a:f32[10,20,30] b:f32[10,20,30] c:f32[10,20,30] d:f32[10,20,30]. let\n'
        '    e:f32[10,20,30] = mul a b\n'
        '    f:f32[10,20,30] = mul c d\n'
        '    g:f32[10,20,30] = add e f\n'
        '    h:f32[10,20,30] = div a b\n'
        '    i:f32[10,20,30] = sub g h\n'
        '    j:f32[10,20,30] = tanh c\n'
        '    k:f32[10,20,30] = log d\n'
        '    l:f32[10,20,30] = mul j k\n'
        '    m:f32[10,20,30] = add i l\n'
        '    n:f32[10,20,30] = integer_pow[y=3] m\n'
        '  in (n,) }'
    ),
    'slice': (
        '{ lambda ; a:f32[5,6]. let\n'
        '    b:f32[2,2] = slice[limit_indices=(3, 4) start_indices=(1, 0) strides=(1, 2)] a\n'
        '  in (b,) }'
    ),
    'pad': (
        '{ lambda ; a:f32[5,6]. let\n'
        '    b:f32[8,12] = pad[padding_config=((1, 2, 0), (0, 1, 1))] a 0.0:f32[]\n'
        '  in (b,) }'
    ),
    'reshape': (
        '{ lambda ; a:f32[4]. let\n'
        '    b:f32[2,2] = reshape[dimensions=None new_sizes=(2, 2) sharding=None] a\n'
        '    c:f32[2,2] = transpose[permutation=(1, 0)] b\n'
        '  in (c,) }'
    ),
    'concat': (
        '{ lambda ; a:f32[3]. let b:f32[9] = concatenate[dimension=0] a a a in (b,) }'
    ),
    'iota': (
        '{ lambda ; a:f32[3]. let\n'
        '    b:i32[3] = iota[dimension=0 dtype=int32 shape=(3,) sharding=None] \n'
        '    c:f32[3] = convert_element_type[new_dtype=float32 weak_type=False] b\n'
        '    d:f32[3] = rev[dimensions=(0,)] a\n'
        '    e:f32[3] = add c d\n'
        '  in (e,) }'
    ),
    'longnames': (
        '{ lambda ; a:f32[3] b:f32[3] c:f32[3] d:f32[3] e:f32[3] f:f32[3] g:f32[3] h:f32[3]\n'
        '    i:f32[3] j:f32[3] k:f32[3] l:f32[3] m:f32[3] n:f32[3] o:f32[3] p:f32[3] q:f32[3]\n'
        '    r:f32[3] s:f32[3] t:f32[3] u:f32[3] v:f32[3] w:f32[3] x:f32[3] y:f32[3] z:f32[3]\n'
        '    ba:f32[3] bb:f32[3] bc:f32[3] bd:f32[3]. let\n'
        '    be:f32[3] = add a b\n'
        '    bf:f32[3] = add be c\n'
        '    bg:f32[3] = add bf d\n'
        '    bh:f32[3] = add bg e\n'
        '    bi:f32[3] = add bh f\n'
        '    bj:f32[3] = add bi g\n'
        '    bk:f32[3] = add bj h\n'
        '    bl:f32[3] = add bk i\n'
        '    bm:f32[3] = add bl j\n'
        '    bn:f32[3] = add bm k\n'
        '    bo:f32[3] = add bn l\n'
        '    bp:f32[3] = add bo m\n'
        '    bq:f32[3] = add bp n\n'
        '    br:f32[3] = add bq o\n'
        '    bs:f32[3] = add br p\n'
        '    bt:f32[3] = add bs q\n'
        '    bu:f32[3] = add bt r\n'
        '    bv:f32[3] = add bu s\n'
        '    bw:f32[3] = add bv t\n'
        '    bx:f32[3] = add bw u\n'
        '    by:f32[3] = add bx v\n'
        '    bz:f32[3] = add by w\n'
        '    ca:f32[3] = add bz x\n'
        '    cb:f32[3] = add ca y\n'
        '    cc:f32[3] = add cb z\n'
        '    cd:f32[3] = add cc ba\n'
        '    ce:f32[3] = add cd bb\n'
        '    cf:f32[3] = add ce bc\n'
        '    cg:f32[3] = add cf bd\n'
        '  in (cg,) }'
    ),
    'select': (
        '{ lambda ; a:bool[3] b:f32[3]. let\n'
        '    c:f32[3] = neg b\n'
        '    d:f32[3] = select_n a b c\n'
        '  in (d,) }'
    ),
    'clamp': (
        '{ lambda ; a:f32[3]. let b:f32[3] = clamp 0.0:f32[] a 1.0:f32[] in (b,) }'
    ),
    'ipow': (
        '{ lambda ; a:f32[3]. let\n'
        '    b:f32[3] = integer_pow[y=3] a\n'
        '    c:f32[3] = pow a 0.5:f32[]\n'
        '    d:f32[3] = add b c\n'
        '  in (d,) }'
    ),
    'bcast2': (
        '{ lambda ; a:f32[3,4]. let\n'
        '    b:f32[2,3,4] = broadcast_in_dim[broadcast_dimensions=(1, 2)] a\n'
        '  in (b,) }'
    ),
    'expand': (
        '{ lambda ; a:f32[3,4]. let\n'
        '    b:f32[1,3,4] = expand_dims[dimensions=(0,)] a\n'
        '    c:f32[3,4] = squeeze[dimensions=(0,)] b\n'
        '  in (c,) }'
    ),
    'cmp': (
        '{ lambda ; a:f32[3]. let\n'
        '    b:bool[3] = gt a 1.0:f32[]\n'
        '    c:bool[3] = lt a 2.0:f32[]\n'
        '    d:bool[3] = and b c\n'
        '    e:bool[3] = eq a 0.0:f32[]\n'
        '    f:bool[3] = not e\n'
        '    g:bool[3] = or d f\n'
        '  in (g,) }'
    ),
    'stopg': (
        '{ lambda ; a:f32[3]. let\n'
        '    b:f32[3] = stop_gradient a\n'
        '    c:f32[3] = pow b 3.0:f32[]\n'
        '  in (c,) }'
    ),
}


@pytest.mark.parametrize("name,f,args", CASES, ids=[c[0] for c in CASES])
def test_jaxpr_text_matches_jax(name, f, args):
    closed = jax.make_jaxpr(f)(*args)
    assert str(closed) == EXPECTED[name]
    ir.check_jaxpr(closed.jaxpr)


def test_narrow_width_breaks_lines():
    closed = jax.make_jaxpr(lambda x: jnp.sin(jnp.cos(x)))(1.0)
    assert closed.pretty_print(width=20) == (
        "{ lambda ; a:f32[]. let\n    b:f32[] = cos a\n    c:f32[] = sin b\n  in (c,) }")


def test_names_continue_past_z():
    closed = jax.make_jaxpr(lambda *xs: sum(xs[1:], xs[0]))(*([1.0] * 28))
    text = str(closed)
    assert "ba:f32[]" in text and "bb:f32[]" in text
