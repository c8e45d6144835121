"""fastt.distributed: torch.distributed's API on Gloo (CPU tensors; CUDA
tensors through host copies). Process groups and collectives live in
distributed_c10d; the launcher is `python -m fastt.distributed.run`
(torchrun's options and environment)."""

from .distributed_c10d import (  # noqa: F401
    Backend, DistBackendError, DistError, DistNetworkError, DistStoreError,
    FileStore, GroupMember, HashStore, P2POp, PrefixStore, ProcessGroup,
    ReduceOp, Store, TCPStore, Work, all_gather, all_gather_into_tensor,
    all_gather_object, all_reduce, all_to_all, all_to_all_single, barrier,
    batch_isend_irecv, broadcast, broadcast_object_list, default_pg_timeout,
    destroy_process_group, gather, gather_object, get_backend,
    get_global_rank, get_group_rank, get_node_local_rank,
    get_process_group_ranks, get_rank, get_world_size, group,
    init_process_group, irecv, is_available, is_gloo_available,
    is_initialized, is_mpi_available, is_nccl_available,
    is_torchelastic_launched, is_ucc_available, isend, monitored_barrier,
    new_group, recv, reduce, reduce_scatter, reduce_scatter_tensor,
    scatter, scatter_object_list, send)
from . import distributed_c10d  # noqa: F401
