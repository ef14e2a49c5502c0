// SPDX-License-Identifier: Apache-2.0
// The WebAssembly glue's answer for each PATH, one JSON line each, as the page gets it: a
// file through a JavaScript byte source (stguard_check_source, as the worker reads a File),
// a folder or an index file copied into the module's file system under the same absolute
// path (stguard_check_folder, as the worker mounts a dropped folder), so that "file" is
// the path given. tests/front_ends/same_envelopes.py compares the envelopes with the
// CLI's, the C API's and Python's.
//   node --no-experimental-fetch tests/web/node_envelopes.js BUILD_WEB PATH...
'use strict';
const fs = require('fs');
const path = require('path');

const [buildWeb, ...paths] = process.argv.slice(2);
const createStguard = require(path.resolve(buildWeb, 'stguard.js'));

const sources = new Map();

function stguardRead(sourceId, offset, length) {
  const fd = sources.get(sourceId);
  const bytes = new Uint8Array(length);
  let done = 0;
  while (done < length) {
    const got = fs.readSync(fd, bytes, done, length - done, offset + done);
    if (got === 0) throw new Error('unexpected end of file at ' + (offset + done));
    done += got;
  }
  return bytes;
}

function copyIntoMemfs(FS, from, to) {
  FS.mkdirTree(to);
  for (const entry of fs.readdirSync(from, {withFileTypes: true})) {
    const source = path.join(from, entry.name);
    if (entry.isDirectory()) copyIntoMemfs(FS, source, `${to}/${entry.name}`);
    else if (entry.isFile()) FS.writeFile(`${to}/${entry.name}`, fs.readFileSync(source));
  }
}

createStguard({stguardRead, print: () => {}, printErr: (text) => console.error(text)})
    .then((Module) => {
      const checkSource = Module.cwrap('stguard_check_source', 'string',
                                       ['number', 'string', 'number', 'number']);
      const checkFolder = Module.cwrap('stguard_check_folder', 'string', ['string']);
      let nextId = 1;
      for (const given of paths) {
        const full = path.resolve(given);
        const isFolder = fs.statSync(full).isDirectory() || full.endsWith('.json');
        let answer;
        if (isFolder) {
          // The worker's file system holds what was dropped: the folder, or the index's.
          const folder = fs.statSync(full).isDirectory() ? full : path.dirname(full);
          copyIntoMemfs(Module.FS, folder, folder);
          answer = checkFolder(given);
        } else {
          const id = nextId++;
          const fd = fs.openSync(full, 'r');
          sources.set(id, fd);
          try {
            answer = checkSource(id, given, fs.fstatSync(fd).size, 0);
          } finally {
            sources.delete(id);
            fs.closeSync(fd);
          }
        }
        process.stdout.write(JSON.stringify(JSON.parse(answer)) + '\n');
      }
    })
    .catch((error) => {
      console.error(error);
      process.exit(1);
    });
