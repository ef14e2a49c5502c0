// SPDX-License-Identifier: Apache-2.0
// Appended to stguard.js (--post-js). The library maps the files it checks; emscripten's
// WORKERFS (the worker's view of a dropped folder's File objects) cannot map, so mmap
// would fail and every file of a dropped folder would be unreadable. Give it the mapping
// emscripten's other file systems have: a private copy of the range, read with the
// worker's FileReaderSync into memory the C side frees at munmap. A file larger than the
// memory left fails with ENOMEM, which the library reports as an I/O error on that file.
(function addWorkerfsMmap() {
  if (typeof WORKERFS === 'undefined' || WORKERFS.stream_ops.mmap) return;
  const EINVAL = 28;  // WASI errno numbers, as emscripten's FS uses them
  const ENOMEM = 48;
  const MMAP_PIECE_BYTES = 16 * 1024 * 1024;
  WORKERFS.stream_ops.mmap = function (stream, address, length, position, prot, flags) {
    if (address !== 0) throw new FS.ErrnoError(EINVAL);
    const ptr = mmapAlloc(length);
    if (!ptr) throw new FS.ErrnoError(ENOMEM);
    // In pieces, so that the worker can show a copy of a large file as it proceeds (each
    // piece passes through WORKERFS.stream_ops.read, which the worker counts).
    for (let done = 0; done < length;) {
      const piece = Math.min(MMAP_PIECE_BYTES, length - done);
      const got = WORKERFS.stream_ops.read(stream, HEAP8, ptr + done, piece, position + done);
      if (got <= 0) break;  // past the file's end: the rest stays zero, as a mapping's would
      done += got;
    }
    return {ptr: ptr, allocated: true};
  };
  Module['WORKERFS'] = WORKERFS;
})();
