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
  WORKERFS.stream_ops.mmap = function (stream, address, length, position, prot, flags) {
    if (address !== 0) throw new FS.ErrnoError(EINVAL);
    const ptr = mmapAlloc(length);
    if (!ptr) throw new FS.ErrnoError(ENOMEM);
    WORKERFS.stream_ops.read(stream, HEAP8, ptr, length, position);
    return {ptr: ptr, allocated: true};
  };
  Module['WORKERFS'] = WORKERFS;
})();
