// SPDX-License-Identifier: Apache-2.0
// Running out of memory in the WebAssembly build is an error value, never an abort: the
// reason the build keeps C++ exceptions on (web/GLUE.md, "Build flags"). A bare pickle of
// 4,000,000,000 bytes (a JavaScript source answering zeros, nothing on disk) is read whole
// by checkSource; its buffer cannot grow past wasm32's 4 GB, and the result must be
// verdict "error", code OutOfMemory, from a module that still answers the next check.
// The accept case: the same source at 1 MiB is read and judged. Peak memory is about
// 4 GB for some 20 s.
//   node --no-experimental-fetch node_oom_test.js BUILD_WEB
'use strict';

const assert = require('assert');
const path = require('path');

const buildWeb = process.argv[2] || path.resolve(__dirname, '../../build-web');
const createStguard = require(path.resolve(buildWeb, 'stguard.js'));

// PROTO 2, then BINUNICODE of the rest of the file but its last byte, STOP: a pickle whose
// one string fills the file.
function barePickleSource(size) {
  return (offset, length) => {
    const bytes = new Uint8Array(length);
    if (offset === 0) {
      bytes.set([0x80, 0x02, 0x58], 0);
      new DataView(bytes.buffer).setUint32(3, size - 8, true);
    }
    if (offset + length === size) bytes[length - 1] = 0x2e;  // STOP
    return bytes;
  };
}

let source = null;
createStguard({stguardRead: (id, offset, length) => source(offset, length),
               print: () => {}, printErr: (text) => console.error(text)})
    .then((Module) => {
      const checkSource = Module.cwrap('stguard_check_source', 'string',
                                       ['number', 'string', 'number', 'number']);
      const check = (size) => {
        source = barePickleSource(size);
        return JSON.parse(checkSource(1, 'huge.pkl', size, 0));
      };
      try {
        const huge = check(4000000000);
        assert.strictEqual(huge.verdict, 'error', JSON.stringify(huge));
        assert.strictEqual(huge.code, 'OutOfMemory', JSON.stringify(huge));
        const small = check(1024 * 1024);
        assert.notStrictEqual(small.verdict, 'error', JSON.stringify(small));
        assert.strictEqual(small.format, 'pickle', JSON.stringify(small));
        console.log(`4 GB bare pickle: ${huge.verdict} ${huge.code} (${huge.message}); ` +
                    `the same at 1 MiB: ${small.verdict}`);
        console.log('node_oom_test: passed');
      } catch (error) {
        console.log(`FAIL: ${error.stack}`);
        console.log('node_oom_test: FAILED');
        process.exit(1);
      }
    });
