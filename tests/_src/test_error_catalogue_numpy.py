"""The error catalogue, arrays: one case per common mistake with didax.numpy, lax, random
and pytrees (see test_error_catalogue.py for the transformations, error_testing.py for
what is checked). The comment of each case says what didax's message must say, besides the
line of the mistake."""
import pytest
from error_testing import catalogue, check_didax_message, check_jax_raises
from jax_absent import needs_jax

CASES, case = catalogue()

# --------------------------------------------------------------------------------------
# Shapes


# both shapes and both sizes, and -1
@case("TypeError", "shape (2, 3) (size 6)", "shape (4, 2) (size 8)", "-1")
def reshape_to_another_size(jax, jnp, lax):
    jnp.reshape(jnp.ones((2, 3)), (4, 2))


# as jnp.reshape, for the method with one integer
@case("TypeError", "shape (2, 3) (size 6)", "shape (5,) (size 5)")
def reshape_method_to_another_size(jax, jnp, lax):
    jnp.ones((2, 3)).reshape(5)


# the known dimensions' product and the size
@case("TypeError", "(4, -1)", "multiply to 4", "does not divide 6")
def reshape_with_an_impossible_inferred_dimension(jax, jnp, lax):
    jnp.ones((2, 3)).reshape(4, -1)


# that the axes are not a permutation, the array's shape, an example
@case("TypeError", "(0, 0)", "not a permutation", "shape (2, 3)", "(1, 0)")
def transpose_with_repeated_axes(jax, jnp, lax):
    jnp.transpose(jnp.ones((2, 3)), (0, 0))


# .at[...].set with the index, both shapes, x's shape
@case("ValueError", "x.at[0].set(values)", "values of shape (5,)", "x[0], (4,)",
      "x has shape (3, 4)")
def at_set_with_values_of_the_wrong_shape(jax, jnp, lax):
    jnp.zeros((3, 4)).at[0].set(jnp.ones(5))


# the method (.add), the index, both shapes
@case("ValueError", "x.at[:, 0].add(values)", "values of shape (4,)", "(3,)")
def at_add_with_values_of_the_wrong_shape(jax, jnp, lax):
    jnp.zeros((3, 4)).at[:, 0].add(jnp.ones(4))


# in-place assignment: .at[idx].set
@case("TypeError", "immutable", "x.at[idx].set(v)")
def in_place_assignment(jax, jnp, lax):
    x = jnp.ones(3)
    x[0] = 1.0


# both operand shapes and the contracted sizes
@case("TypeError", "(3,) and (4,)", "lhs shape (2, 3)", "rhs shape (4, 5)")
def matmul_of_mismatched_shapes(jax, jnp, lax):
    jnp.ones((2, 3)) @ jnp.ones((4, 5))


# the contracted sizes and both operand types
@case("TypeError", "(3,) and (4,)", "f32[2,3]", "f32[4,5]")
def dot_general_of_mismatched_contraction(jax, jnp, lax):
    lax.dot_general(jnp.ones((2, 3)), jnp.ones((4, 5)), (((1,), (0,)), ((), ())))


# all shapes and the axis
@case("TypeError", "(2, 3), (2, 4)", "dimension 0")
def concatenate_of_mismatched_shapes(jax, jnp, lax):
    jnp.concatenate([jnp.ones((2, 3)), jnp.ones((2, 4))])


# all shapes
@case("ValueError", "[(3,), (4,)]", "jnp.concatenate")
def stack_of_mismatched_shapes(jax, jnp, lax):
    jnp.stack([jnp.ones(3), jnp.ones(4)])


# the remainder, the size and parts, jnp.array_split
@case("ValueError", "equal division", "rest is 1", "5 elements", "2 parts", "jnp.array_split")
def split_into_unequal_parts(jax, jnp, lax):
    jnp.split(jnp.ones(5), 2)


# both shapes
@case("ValueError", "(2, 3), (4,)", "equal or one of them is 1")
def add_of_shapes_that_do_not_broadcast(jax, jnp, lax):
    jnp.ones((2, 3)) + jnp.ones((4,))


# all three shapes, and how shapes broadcast
@case("ValueError", "(3,), (3,), (4,)", "equal or one of them is 1")
def where_of_shapes_that_do_not_broadcast(jax, jnp, lax):
    jnp.where(jnp.ones(3) > 0, jnp.ones(3), jnp.ones(4))


# the primitive, both dtypes, and jnp.add
@case("TypeError", "int32, float32", "jnp.add", "i32[3], f32[3]")
def lax_add_of_mixed_dtypes(jax, jnp, lax):
    lax.add(jnp.ones(3, jnp.int32), jnp.ones(3))


# the primitive, the dtype and the operand type
@case("TypeError", "sin", "int32", "i32[3]")
def lax_sin_of_integers(jax, jnp, lax):
    lax.sin(jnp.ones(3, jnp.int32))


# both shapes
@case("TypeError", "update shape (4,)", "operand shape (3,)")
def dynamic_update_slice_too_large(jax, jnp, lax):
    lax.dynamic_update_slice(jnp.ones(3), jnp.ones(4), (0,))


# the feature sizes and both operand shapes
@case("ValueError", "lhs shape (1, 2, 5, 5)", "rhs shape (3, 3, 3, 3)")
def conv_of_mismatched_features(jax, jnp, lax):
    lax.conv(jnp.ones((1, 2, 5, 5)), jnp.ones((3, 3, 3, 3)), (1, 1), "SAME")


# --------------------------------------------------------------------------------------
# Axes


# the axis and the array's rank
@case("ValueError", "axis 2", "dimension 2")
def sum_over_an_axis_out_of_range(jax, jnp, lax):
    jnp.sum(jnp.ones((2, 3)), axis=2)


# the repeated axes
@case("ValueError", "duplicate", "(0, 0)")
def sum_over_a_repeated_axis(jax, jnp, lax):
    jnp.sum(jnp.ones((2, 3)), axis=(0, 0))


# the function, the axis and the rank
@case("ValueError", "axis 3", "dimension 2")
def expand_dims_at_an_axis_out_of_range(jax, jnp, lax):
    jnp.expand_dims(jnp.ones(3), 3)


# the shape and the axis
@case("ValueError", "shape=(2, 3)", "dimensions=(0,)", "axis 0 has size 2", "size 1")
def squeeze_of_an_axis_that_is_not_one(jax, jnp, lax):
    jnp.squeeze(jnp.ones((2, 3)), axis=0)


# the function, the axis and the rank
@case("IndexError", "axis 5", "dimension 2")
def swapaxes_with_an_axis_out_of_range(jax, jnp, lax):
    jnp.swapaxes(jnp.ones((2, 3)), 0, 5)


# --------------------------------------------------------------------------------------
# Indexing and building arrays


# the index's type and value, int(i)
@case("TypeError", "integer or boolean", "float64 (1.0)", "int(i)")
def index_with_a_float(jax, jnp, lax):
    jnp.ones(3)[1.0]


# the index's dtype, and astype
@case("TypeError", "integer or boolean", "float32", "astype(jnp.int32)")
def index_with_a_float_array(jax, jnp, lax):
    jnp.ones(3)[jnp.array([0.0, 1.0])]


# the array's rank and shape, how many indices
@case("IndexError", "1-dimensional (shape (3,))", "2 were indexed")
def too_many_indices(jax, jnp, lax):
    jnp.ones(3)[0, 0]


# that the rows differ in length, and to make them rectangular
@case("ValueError", "inhomogeneous", "rectangular")
def array_of_a_ragged_list(jax, jnp, lax):
    jnp.array([[1, 2], [3]])


# the function, the list, jnp.asarray
@case("TypeError", "list", "jnp.asarray")
def reduction_of_a_list(jax, jnp, lax):
    jnp.sum([1.0, 2.0])


# the bad name, and valid spellings
@case("TypeError", "'flaot32'", "'float32'")
def misspelled_dtype(jax, jnp, lax):
    jnp.zeros(3, dtype="flaot32")


# the bad name and valid spellings
@case("TypeError", "'foo'", "jnp.float32")
def astype_to_an_unknown_dtype(jax, jnp, lax):
    jnp.ones(3).astype("foo")


# the label
@case("ValueError", "'l'", "'il'", "ij, jk")
def einsum_with_an_unknown_output_label(jax, jnp, lax):
    jnp.einsum("ij,jk->il", jnp.ones((2, 3)), jnp.ones((3, 4)))


# the label, the operand, both sizes
@case("ValueError", "'j'", "operand 1")
def einsum_with_mismatched_label_sizes(jax, jnp, lax):
    jnp.einsum("ij,jk->ik", jnp.ones((2, 3)), jnp.ones((4, 4)))


# the required and the given shape
@case("ValueError", "[..., n, n]", "(2, 3)", "jnp.linalg.pinv")
def inverse_of_a_non_square_matrix(jax, jnp, lax):
    jnp.linalg.inv(jnp.ones((2, 3)))


# --------------------------------------------------------------------------------------
# Random keys and pytrees


# the key's type and how to make one
@case("TypeError", "int", "random.key", "PRNGKey")
def random_with_an_integer_key(jax, jnp, lax):
    jax.random.normal(0, (3,))


# the expected and the given shape
@case("TypeError", "(3,)", "(2,)")
def random_with_a_key_of_the_wrong_shape(jax, jnp, lax):
    jax.random.normal(jnp.zeros(3, jnp.uint32), (3,))


# the expected and the given dtype
@case("TypeError", "uint32", "float32")
def random_with_a_float_key(jax, jnp, lax):
    jax.random.normal(jnp.zeros(2), (3,))


# the key path and what each tree has there
@case("ValueError", "['b']", "a list of 2 entries", "a list of 3 entries")
def tree_map_over_mismatched_trees(jax, jnp, lax):
    jax.tree_util.tree_map(lambda a, b: a + b, {"a": 1, "b": [1, 2]}, {"a": 1, "b": [1, 2, 3]})


@pytest.mark.parametrize("c", CASES, ids=[c.name for c in CASES])
def test_didax_message(c):
    check_didax_message(c)


@needs_jax
@pytest.mark.parametrize("c", CASES, ids=[c.name for c in CASES])
def test_jax_raises_the_same_type(c):
    check_jax_raises(c)
