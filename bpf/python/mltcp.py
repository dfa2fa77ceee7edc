# SPDX-License-Identifier: BSD-3-Clause
"""mltcp - MLTCP iteration hints from Python (ctypes binding of libmltcp).

One line per iteration before the gradient exchange tells the MLTCP
congestion control how many bytes this iteration sends:

    import mltcp
    mltcp.hint(sock, nbytes)        # on one socket (an object or an fd)
    mltcp.hint_job(nbytes)          # on every MLTCP socket of this process's
                                    # cgroup (e.g. the ones PyTorch owns)
    mltcp.seed_job(value)           # once, before the first hint: the same
                                    # value on every host of the job

(mltcp_torch.py hooks the latter into PyTorch DDP.)  mltcp.window_repairs(sock)
reads, for diagnostics, how often the BPF datapath repaired the socket's
window (root only).  A size that is not an
int in 1..max_hint_bytes() raises ValueError.  Delivery failures raise
MltcpError (an OSError: .errno is EOPNOTSUPP, ENOENT, EACCES, ENOPROTOOPT,
...) with libmltcp's explanation: the socket does not use MLTCP, MLTCP is not
loaded, hints are not permitted, the cgroup has no MLTCP attachment.  The library is found via $MLTCP_LIBRARY,
the build tree (build/cmake/bpf/), this module's install prefix, or the
dynamic loader's search path, in that order.
"""
import ctypes
import ctypes.util
import errno
import os

__all__ = ["hint", "hint_job", "seed_job", "checked_size", "max_hint_bytes", "uses_mltcp",
           "window_repairs", "MltcpError", "library_path"]


class MltcpError(OSError):
    """A hint could not be delivered; str() says what failed and what to do."""


def _candidates():
    env = os.environ.get("MLTCP_LIBRARY")
    if env:
        yield env
    here = os.path.dirname(os.path.abspath(__file__))
    # Source tree: bpf/python/mltcp.py -> build/cmake/bpf/libmltcp.so
    root = os.path.dirname(os.path.dirname(here))
    yield os.path.join(root, "build", "cmake", "bpf", "libmltcp.so.0")
    # Installed: <prefix>/lib/python3/dist-packages/mltcp.py
    prefix = os.path.dirname(os.path.dirname(os.path.dirname(here)))
    multiarch = "%s-linux-gnu" % os.uname().machine
    for libdir in ("lib/" + multiarch, "lib", "lib64"):
        yield os.path.join(prefix, libdir, "libmltcp.so.0")
    found = ctypes.util.find_library("mltcp")
    yield found if found else "libmltcp.so.0"


def _load():
    errors = []
    for path in _candidates():
        if os.sep in path and not os.path.exists(path):
            continue
        try:
            lib = ctypes.CDLL(path, use_errno=True)
        except OSError as e:
            errors.append("%s: %s" % (path, e))
            continue
        lib.mltcp_hint_iteration.argtypes = [ctypes.c_int, ctypes.c_uint64]
        lib.mltcp_hint_iteration.restype = ctypes.c_int
        lib.mltcp_hint_job.argtypes = [ctypes.c_uint64]
        lib.mltcp_hint_job.restype = ctypes.c_int
        lib.mltcp_seed_job.argtypes = [ctypes.c_uint64]
        lib.mltcp_seed_job.restype = ctypes.c_int
        lib.mltcp_hint_bytes_max.argtypes = []
        lib.mltcp_hint_bytes_max.restype = ctypes.c_uint64
        lib.mltcp_socket_uses_mltcp.argtypes = [ctypes.c_int]
        lib.mltcp_socket_uses_mltcp.restype = ctypes.c_int
        if hasattr(lib, "mltcp_socket_window_repairs"):     # libmltcp 0.1.2
            lib.mltcp_socket_window_repairs.argtypes = [ctypes.c_int,
                                                        ctypes.POINTER(ctypes.c_uint64)]
            lib.mltcp_socket_window_repairs.restype = ctypes.c_int
        lib.mltcp_last_error.argtypes = []
        lib.mltcp_last_error.restype = ctypes.c_char_p
        return lib, path
    raise ImportError("libmltcp not found (build it with 'make all', install it, "
                      "or set MLTCP_LIBRARY): " + "; ".join(errors))


_lib, library_path = _load()


def _fd(sock):
    return sock if isinstance(sock, int) else sock.fileno()


def _raise():
    err = ctypes.get_errno()
    raise MltcpError(err, _lib.mltcp_last_error().decode(errors="replace"))


def max_hint_bytes():
    """The largest hint size libmltcp accepts (the core's limit)."""
    return _lib.mltcp_hint_bytes_max()


def checked_size(nbytes):
    """nbytes if it is a valid hint size, else ValueError naming the range."""
    # ctypes would wrap -5 and 2**64 silently: check before converting.
    if isinstance(nbytes, bool) or not isinstance(nbytes, int):
        raise ValueError("hint size must be an int number of bytes, not %s %r"
                         % (type(nbytes).__name__, nbytes))
    top = max_hint_bytes()
    if not 1 <= nbytes <= top:
        raise ValueError("hint size %d bytes is out of range: an iteration's bytes "
                         "must be 1..%d" % (nbytes, top))
    return nbytes


def hint(sock, nbytes):
    """An iteration of nbytes bytes starts now on sock."""
    if _lib.mltcp_hint_iteration(_fd(sock), checked_size(nbytes)) != 0:
        _raise()


def hint_job(nbytes):
    """An iteration starts now; each MLTCP socket of this cgroup sends nbytes of it."""
    if _lib.mltcp_hint_job(checked_size(nbytes)) != 0:
        _raise()


def seed_job(seed):
    """The first-iteration seed of this cgroup's MLTCP sockets (libmltcp's
    mltcp_seed_job): any int in 0..2**64-1, the same on every host of the job."""
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ValueError("job seed must be an int, not %s %r" % (type(seed).__name__, seed))
    if not 0 <= seed < 1 << 64:
        raise ValueError("job seed %d is out of range: 0..2**64-1" % seed)
    if _lib.mltcp_seed_job(seed) != 0:
        _raise()


def uses_mltcp(sock):
    """True if sock uses the mltcp or mltcp_cubic congestion control."""
    r = _lib.mltcp_socket_uses_mltcp(_fd(sock))
    if r < 0:
        _raise()
    return r == 1


def window_repairs(sock):
    """Diagnostics: corrupted windows MLTCP's BPF datapath repaired on sock
    (libmltcp's mltcp_socket_window_repairs; root only)."""
    if not hasattr(_lib, "mltcp_socket_window_repairs"):
        raise MltcpError(errno.ENOSYS, "%s predates mltcp_socket_window_repairs (libmltcp 0.1.2)"
                         % library_path)
    n = ctypes.c_uint64(0)
    if _lib.mltcp_socket_window_repairs(_fd(sock), ctypes.byref(n)) != 0:
        _raise()
    return n.value
