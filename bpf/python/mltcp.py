# SPDX-License-Identifier: BSD-3-Clause
"""mltcp - MLTCP iteration hints from Python (ctypes binding of libmltcp).

In a PyTorch training loop, one line per iteration before the gradient
exchange tells the MLTCP congestion control how many bytes this iteration
sends on a socket:

    import mltcp
    mltcp.hint(sock, nbytes)        # sock: a socket object or an fd

Raises MltcpError (an OSError: .errno is EOPNOTSUPP, ENOENT, EACCES, ...)
with libmltcp's explanation when the socket does not use MLTCP, MLTCP is not
loaded, or hints are not permitted.  The library is found via $MLTCP_LIBRARY,
the build tree (build/cmake/bpf/), this module's install prefix, or the
dynamic loader's search path, in that order.
"""
import ctypes
import ctypes.util
import os

__all__ = ["hint", "uses_mltcp", "MltcpError", "library_path"]


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
        lib.mltcp_socket_uses_mltcp.argtypes = [ctypes.c_int]
        lib.mltcp_socket_uses_mltcp.restype = ctypes.c_int
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


def hint(sock, nbytes=0):
    """An iteration of nbytes bytes starts now on sock (0: size unknown)."""
    if _lib.mltcp_hint_iteration(_fd(sock), int(nbytes)) != 0:
        _raise()


def uses_mltcp(sock):
    """True if sock uses the mltcp or mltcp_cubic congestion control."""
    r = _lib.mltcp_socket_uses_mltcp(_fd(sock))
    if r < 0:
        _raise()
    return r == 1
