# SPDX-License-Identifier: Apache-2.0
"""Small inputs the front-end tests build (tests/cli/test_envelope.py,
tests/front_ends/same_envelopes.py): a tar, a ZIP that is no checkpoint, an .npy file.
Standard library only; import with tests/support on sys.path."""
import io
import struct
import tarfile
import zipfile


def tar_bytes():
    """A tar with one 4-byte member "storages": tar-shaped, yet no PyTorch checkpoint."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as archive:
        member = tarfile.TarInfo("storages")
        member.size = 4
        archive.addfile(member, io.BytesIO(b"\0\0\0\0"))
    return out.getvalue()


def zip_bytes():
    """A ZIP holding one text file: neither PyTorch nor npz."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("model/keras_metadata.txt", "not a checkpoint")
    return out.getvalue()


def npy_bytes(descr="<f4", data=struct.pack("<2f", 1.0, 2.0)):
    """A version 1.0 .npy of shape (2,) (two float32 by default), its header padded to 64."""
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (2,), }" % descr
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + data
