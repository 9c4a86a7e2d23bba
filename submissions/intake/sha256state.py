"""A sha256 whose running state can be saved as bytes and resumed, in another process or on another machine.

The parts of a chunked upload reach whichever web process takes them; hashlib's objects cannot be saved, so
without this the completion read the whole bundle again to hash it (a 2 GB bundle: seconds, and about 40% of
the upload's time in bench/upload.py). This is OpenSSL's SHA256_CTX, from the libcrypto that hashlib itself
uses, kept with the upload. A known-answer test at import, a state saved and resumed half-way, decides whether
it is used (`AVAILABLE`); without it, uploads hash at completion.

The target it serves: issue 27's upload of 2 GB through the chunked API at 0.75× or more of the reference
sink in bench/upload.py. Not re-measured without it yet: that measurement decides whether it stays.
"""

import ctypes
import ctypes.util
import hashlib

CTX_BYTES = 112  # sizeof(SHA256_CTX): h[8], Nl, Nh, data[16], num, md_len (32-bit each)


def _load():
    name = ctypes.util.find_library("crypto")
    if not name:
        return None
    try:
        lib = ctypes.CDLL(name)
        lib.SHA256_Init.argtypes = [ctypes.c_void_p]
        lib.SHA256_Update.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t]
        lib.SHA256_Final.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    except (OSError, AttributeError):
        return None
    return lib


_lib = _load()


class Sha256:
    """sha256 with a `state` to save and a constructor that resumes one."""

    def __init__(self, state: bytes = b""):
        self._ctx = ctypes.create_string_buffer(CTX_BYTES)
        if state:
            if len(state) != CTX_BYTES:
                raise ValueError("not a saved sha256 state")
            ctypes.memmove(self._ctx, state, CTX_BYTES)
        else:
            _lib.SHA256_Init(self._ctx)

    def update(self, data) -> None:
        view = memoryview(data).cast("B")
        if not view.nbytes:
            return
        if view.readonly:
            view = memoryview(bytearray(view))  # ctypes needs a writable buffer to take its address
        block = (ctypes.c_char * view.nbytes).from_buffer(view)
        _lib.SHA256_Update(self._ctx, block, view.nbytes)

    @property
    def state(self) -> bytes:
        return self._ctx.raw

    def hexdigest(self) -> str:
        ctx = ctypes.create_string_buffer(self._ctx.raw, CTX_BYTES)  # Final spoils the context
        out = ctypes.create_string_buffer(32)
        _lib.SHA256_Final(out, ctx)
        return out.raw.hex()


def _works() -> bool:
    if _lib is None:
        return False
    try:
        data = bytes(range(256)) * 300
        first = Sha256()
        first.update(data[:1000])
        second = Sha256(first.state)
        second.update(memoryview(data)[1000:])
        return second.hexdigest() == hashlib.sha256(data).hexdigest()
    except (OSError, ValueError, TypeError, AttributeError):
        return False


AVAILABLE = _works()
