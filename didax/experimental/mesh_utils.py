"""Mirrors `jax.experimental.mesh_utils`: arrays of devices for `Mesh`. didax's devices share
the host's memory, so there is no physical layout to follow: devices go in id order."""
from didax._src.parallel import device as _device
from didax._src.parallel.sharding import device_mesh as _device_mesh


def create_device_mesh(mesh_shape, devices=None, *, contiguous_submeshes: bool = False,
                       allow_split_physical_axes: bool = False):
    """The devices as an array of `mesh_shape` (a NumPy array of devices)."""
    return _device_mesh(mesh_shape, devices, "create_device_mesh")


def create_hybrid_device_mesh(mesh_shape, dcn_mesh_shape, devices=None, *,
                              process_is_granule: bool = False,
                              should_sort_granules_by_key: bool = True,
                              allow_split_physical_axes: bool = False):
    """A mesh of `mesh_shape` within each process times `dcn_mesh_shape` across them:
    the devices as an array of their elementwise product, each process's together."""
    if len(mesh_shape) != len(dcn_mesh_shape):
        raise ValueError(f"create_hybrid_device_mesh: mesh_shape {tuple(mesh_shape)} and "
                         f"dcn_mesh_shape {tuple(dcn_mesh_shape)} must have one length")
    devs = list(_device.devices() if devices is None else devices)
    by_process = sorted(devs, key=lambda d: (d.process_index, d.id))
    shape = tuple(int(a) * int(b) for a, b in zip(mesh_shape, dcn_mesh_shape))
    return _device_mesh(shape, by_process, "create_hybrid_device_mesh")
