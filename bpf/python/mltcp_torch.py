# SPDX-License-Identifier: BSD-3-Clause
"""mltcp_torch - PyTorch DDP announces its iterations to MLTCP (job-level hints).

Gloo (and NCCL's socket transport) own their TCP connections, so a training
loop cannot hint a socket.  One line after wrapping the model does it for all
of them:

    import mltcp_torch
    model = torch.nn.parallel.DistributedDataParallel(model)
    mltcp_torch.announce_iterations(model)

This registers a DDP communication hook: when an iteration's first gradient
bucket is ready, i.e. when its gradient exchange starts, it calls
mltcp.hint_job(n) ("an iteration starts now, each of my connections sends n
bytes of it") and then runs DDP's default all-reduce.  n defaults to what a
ring all-reduce of the model's gradients puts on a rank's send connection:
2 (W - 1) / W x the gradient bytes (W ranks); pass nbytes= to override.

Before its first hint it gives the job one first-iteration seed on every
host (mltcp.seed_job), so that all of the job's connections, whichever
rank sends on them, act at the same random ratio in the first iteration:
by default a hash of the job's rendezvous address (MASTER_ADDR:MASTER_PORT,
which torchrun and init_method="env://" give every rank of a job, and no
two jobs at once); pass seed= to choose one, seed=None for a draw per host.

The process must run in a cgroup that `mltcpctl attach --cgroup` selected
(docs/pytorch.md); announce_iterations() checks that once and raises
mltcp.MltcpError otherwise, and ValueError for a size outside 1..2^48 bytes.
"""
import hashlib
import os

import torch
import torch.distributed as dist
from torch.distributed.algorithms.ddp_comm_hooks import default_hooks

import mltcp

__all__ = ["announce_iterations", "ring_allreduce_bytes", "rendezvous_seed", "IterationHints"]

_FROM_RENDEZVOUS = object()   # announce_iterations' default seed


def ring_allreduce_bytes(model, world_size):
    """Bytes a ring all-reduce of model's gradients sends per rank and iteration."""
    grad_bytes = sum(p.numel() * p.element_size() for p in model.parameters()
                     if p.requires_grad)
    if world_size < 2:
        return grad_bytes
    return 2 * (world_size - 1) * grad_bytes // world_size


class IterationHints:
    """State of the hook: the hinted size, the group, the hook it wraps."""

    def __init__(self, nbytes, process_group=None, then=None):
        self.nbytes = mltcp.checked_size(nbytes)
        self.process_group = process_group
        self.then = then or default_hooks.allreduce_hook
        self.iterations = 0

    def hook(self, bucket):
        if bucket.index() == 0:
            mltcp.hint_job(self.nbytes)
            self.iterations += 1
        return self.then(self.process_group, bucket)


def _hint_hook(state, bucket):
    return state.hook(bucket)


def rendezvous_seed():
    """A job seed every rank of the job computes alike: 64 bits of a hash of
    MASTER_ADDR:MASTER_PORT; None when they are not set."""
    addr, port = os.environ.get("MASTER_ADDR"), os.environ.get("MASTER_PORT")
    if not addr or not port:
        return None
    digest = hashlib.sha256(("%s:%s" % (addr, port)).encode()).digest()
    return int.from_bytes(digest[:8], "little")


def announce_iterations(ddp_model, nbytes=None, process_group=None, then=None,
                        seed=_FROM_RENDEZVOUS):
    """Register the hinting communication hook on ddp_model; returns its state.

    then: the communication hook to run after the hint, called as
    then(process_group, bucket) (default: DDP's all-reduce).
    seed: the job's first-iteration seed (default: rendezvous_seed(); None:
    none, each host draws its own).
    """
    if not isinstance(ddp_model, torch.nn.parallel.DistributedDataParallel):
        raise TypeError("announce_iterations() needs a DistributedDataParallel model, not %s"
                        % type(ddp_model).__name__)
    if nbytes is None:
        world = dist.get_world_size(process_group) if process_group else dist.get_world_size()
        nbytes = ring_allreduce_bytes(ddp_model.module, world)
    state = IterationHints(nbytes, process_group, then)
    if seed is _FROM_RENDEZVOUS:
        seed = rendezvous_seed()
    # Fail now, not in the first backward pass: is this cgroup attached?
    # Setting the seed asks (the sockets take it at their first hint).  No
    # hint before the first iteration's: a connection silent since a hint
    # counts its next bytes as that hint's iteration, so a hint here would
    # spend the seeded first iteration on whatever the job sends before
    # its first backward pass.  Without a seed, a hint is the only way to
    # ask, and that cost is taken.
    if seed is not None:
        mltcp.seed_job(seed)
    else:
        mltcp.hint_job(state.nbytes)
    ddp_model.register_comm_hook(state, _hint_hook)
    return state
