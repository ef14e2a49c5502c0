// SPDX-License-Identifier: Apache-2.0
// The WebAssembly build judged against the native CLI, under node: every file of corpus/
// is read through a JavaScript byte source (Module.stguardRead over fs.readSync, as the
// page's worker reads a File) and must get the same verdict, code, offset and tensor as
// `stguard check --json` gives natively. Then the byte source's own contract: a source
// that throws is verdict error with kIoError and the thrown message; a 16 GB sparse
// safetensors file is judged from under 1 MB read; a source that returns short is an I/O
// error too.
//   node --no-experimental-fetch tests/web/node_check_test.js BUILD_WEB NATIVE_CLI CORPUS
// Prints one line per mismatch and a summary; exits 1 on any failure.
'use strict';
const assert = require('assert');
const childProcess = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

const [buildWeb, nativeCli, corpus] = process.argv.slice(2);
const createStguard = require(path.resolve(buildWeb, 'stguard.js'));

// Sources: id → {fd, bytesRead} or a function that answers reads itself.
const sources = new Map();
let nextSourceId = 1;

function stguardRead(sourceId, offset, length) {
  const source = sources.get(sourceId);
  if (typeof source.read === 'function') return source.read(offset, length);
  const bytes = new Uint8Array(length);
  let done = 0;
  while (done < length) {
    const got = fs.readSync(source.fd, bytes, done, length - done, offset + done);
    if (got === 0) throw new Error('unexpected end of file at ' + (offset + done));
    done += got;
  }
  source.bytesRead += length;
  source.reads += 1;
  return bytes;
}

function checkWith(checkSource, source, name, size, remote) {
  const id = nextSourceId++;
  sources.set(id, source);
  try {
    return JSON.parse(checkSource(id, name, size, remote ? 1 : 0));
  } finally {
    sources.delete(id);
  }
}

function checkFile(checkSource, file) {
  const fd = fs.openSync(file, 'r');
  const source = {fd, bytesRead: 0, reads: 0};
  try {
    const result = checkWith(checkSource, source, file, fs.fstatSync(fd).size, false);
    return {result, source};
  } finally {
    fs.closeSync(fd);
  }
}

function listFiles(folder) {
  const files = [];
  for (const entry of fs.readdirSync(folder, {withFileTypes: true})) {
    const full = path.join(folder, entry.name);
    if (entry.isDirectory()) files.push(...listFiles(full));
    else if (entry.isFile()) files.push(full);
  }
  return files.sort();
}

// nativeVerdicts runs the CLI over the files in batches: one JSON line per file.
function nativeVerdicts(files) {
  const verdicts = new Map();
  const batch = 200;
  for (let i = 0; i < files.length; i += batch) {
    const run = childProcess.spawnSync(nativeCli, ['check', '--json', ...files.slice(i, i + batch)],
                                       {encoding: 'utf8', maxBuffer: 1 << 28});
    if (run.error) throw run.error;
    for (const line of run.stdout.split('\n')) {
      if (line.trim() === '') continue;
      const result = JSON.parse(line);
      verdicts.set(result.file, result);
    }
  }
  return verdicts;
}

// The fields the page shows and the browser tests compare.
function key(result) {
  return JSON.stringify({
    format: result.format, verdict: result.verdict, code: result.code,
    offset: result.offset, tensor: result.tensor,
  });
}

function compareCorpus(checkSource) {
  // A path ending in .json is a sharded index to the CLI (a folder check); a byte source
  // is always one file, so the page checks those as files and they are not compared.
  const files = listFiles(corpus).filter((file) => !file.endsWith('.json'));
  const native = nativeVerdicts(files);
  let mismatches = 0;
  const counts = {};
  for (const file of files) {
    const expected = native.get(file);
    const {result} = checkFile(checkSource, file);
    counts[result.verdict] = (counts[result.verdict] || 0) + 1;
    if (!expected || key(expected) !== key(result)) {
      mismatches += 1;
      if (mismatches <= 40) {
        console.log(`MISMATCH ${file}\n  native ${expected ? key(expected) : 'none'}` +
                    `\n  wasm   ${key(result)}\n  wasm message: ${result.message || ''}`);
      }
    }
  }
  console.log(`corpus: ${files.length} files, ${mismatches} mismatches; wasm verdicts ` +
              JSON.stringify(counts));
  return mismatches === 0;
}

function testThrowingSource(checkSource) {
  const source = {read: () => { throw new Error('the server ignored the Range header'); }};
  const result = checkWith(checkSource, source, 'https://example.test/x.safetensors', 4096,
                           true);
  assert.strictEqual(result.verdict, 'error');
  assert.strictEqual(result.code, 'IoError');
  assert.match(result.message, /the server ignored the Range header/);
  // A source answering with fewer bytes than asked is an I/O error, not data.
  const short = {read: (offset, length) => new Uint8Array(Math.max(0, length - 1))};
  const shortResult = checkWith(checkSource, short, 'short.safetensors', 4096, false);
  assert.strictEqual(shortResult.verdict, 'error');
  assert.strictEqual(shortResult.code, 'IoError');
  // A size that is not an exact integer Number is refused before any read.
  const badSize = checkWith(checkSource, short, 'huge.safetensors', 2 ** 60, false);
  assert.strictEqual(badSize.verdict, 'error');
  console.log('throwing, short and oversized sources: verdict error as expected');
}

// A 16 GB sparse safetensors file: one U8 tensor filling it, header padded with spaces.
function testSparseHuge(checkSource) {
  const total = 16 * 1024 ** 3;
  const headerLength = 128;
  const dataLength = total - 8 - headerLength;
  const header = JSON.stringify({w: {dtype: 'U8', shape: [dataLength],
                                     data_offsets: [0, dataLength]}}).padEnd(headerLength, ' ');
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'stguard-web-')), 'big.safetensors');
  const prefix = Buffer.alloc(8);
  prefix.writeBigUInt64LE(BigInt(headerLength));
  fs.writeFileSync(file, Buffer.concat([prefix, Buffer.from(header, 'latin1')]));
  fs.truncateSync(file, total);
  try {
    const {result, source} = checkFile(checkSource, file);
    assert.strictEqual(result.verdict, 'valid', JSON.stringify(result));
    assert.ok(source.bytesRead < 1024 * 1024, `read ${source.bytesRead} bytes`);
    const tensors = result.contents && result.contents.tensors;
    assert.ok(Array.isArray(tensors) && tensors.length === 1 && tensors[0].name === 'w');
    console.log(`16 GB sparse safetensors: valid from ${source.bytesRead} bytes in ` +
                `${source.reads} reads`);
    // The same file with its size one byte short of the tensor data: invalid, same reads.
    const cut = checkWith(checkSource, {fd: fs.openSync(file, 'r'), bytesRead: 0, reads: 0},
                          file, total - 1, false);
    assert.strictEqual(cut.verdict, 'invalid');
  } finally {
    fs.rmSync(path.dirname(file), {recursive: true});
  }
}

// The resumable check a URL uses (web/GLUE.md): a source that answers null for bytes it
// does not hold makes the answer {"need":true}; fetching the first missed range and
// running again converges on the verdict. Remote, a ZIP checkpoint with a bad storage CRC
// is valid with its storage checksums listed as unchecked and on the verdict line; with
// every byte held and remote off, refused as locally.
function testResumable(checkSource) {
  // A valid checkpoint with one byte of its first storage flipped: the first occurrence
  // of the storage's name is in its local header, the last signature before it.
  const bytes = fs.readFileSync(path.join(corpus, 'torch', 'valid', 'shared_storage.zip.pt'));
  const local = bytes.lastIndexOf(Buffer.from('PK\x03\x04', 'latin1'), bytes.indexOf('/data/0'));
  const data = local + 30 + bytes.readUInt16LE(local + 26) + bytes.readUInt16LE(local + 28);
  bytes[data] ^= 0xff;
  const held = new Uint8Array(bytes.length);
  let pending = null;
  const source = {read: (offset, length) => {
    for (let i = offset; i < offset + length; i++) {
      if (!held[i]) {
        if (pending === null) pending = {offset, length};
        return null;
      }
    }
    return new Uint8Array(bytes.subarray(offset, offset + length));
  }};
  let rounds = 0;
  let result;
  for (;;) {
    result = checkWith(checkSource, source, 'https://example.test/bad.pt', bytes.length, true);
    if (!result.need) break;
    assert.ok(pending !== null, 'a need without a missed read');
    held.fill(1, pending.offset, Math.min(bytes.length, pending.offset + Math.max(pending.length, 64)));
    pending = null;
    assert.ok(++rounds < 50, 'the resumable check does not converge');
  }
  assert.strictEqual(result.verdict, 'valid', JSON.stringify(result));
  assert.ok(rounds >= 2, `only ${rounds} rounds`);
  assert.match(result.verdict_line, /^valid \(remote: \d+ storage checksums? not read\)$/);
  assert.ok(result.unchecked.length === 1 && /storage checksum/.test(result.unchecked[0]));
  const read = held.reduce((sum, b) => sum + b, 0);
  held.fill(1);
  const whole = checkWith(checkSource, source, 'https://example.test/bad.pt', bytes.length, false);
  assert.deepStrictEqual([whole.verdict, whole.code, whole.verdict_line, whole.unchecked],
                         ['refused', 'ZipChecksum', 'refused', []]);
  console.log(`resumable check: "${result.verdict_line}" after ${rounds} rounds from ${read} ` +
              `of ${bytes.length} bytes; every byte held: refused ZipChecksum`);
}

// GGUF float metadata as the page shows it (contents.metadata, [key, text] pairs): the
// digits of the CLI's text and --json (FloatText): -0.0 keeps its sign, 1.0 its '.0', an
// f32 its shortest digits, NaN and the infinities their words.
function testGgufFloatMetadata(checkSource) {
  const text = (value) => {
    const bytes = Buffer.from(value, 'utf8');
    const length = Buffer.alloc(8);
    length.writeBigUInt64LE(BigInt(bytes.length));
    return Buffer.concat([length, bytes]);
  };
  const f32 = (value) => { const b = Buffer.alloc(8); b.writeUInt32LE(6); b.writeFloatLE(value, 4); return b; };
  const f64 = (value) => { const b = Buffer.alloc(12); b.writeUInt32LE(12); b.writeDoubleLE(value, 4); return b; };
  const rows = [['f.neg_zero', f32(-0), '-0.0'], ['f.tenth', f32(0.1), '0.1'],
                ['f.nan', f32(NaN), 'nan'], ['d.one', f64(1), '1.0'],
                ['d.minus_inf', f64(-Infinity), '-inf'], ['d.third', f64(1 / 3), '0.3333333333333333']];
  const head = Buffer.alloc(24);
  head.write('GGUF', 0, 'latin1');
  head.writeUInt32LE(3, 4);
  head.writeBigUInt64LE(0n, 8);
  head.writeBigUInt64LE(BigInt(rows.length), 16);
  const bytes = Buffer.concat([head, ...rows.flatMap(([key, value]) => [text(key), value])]);
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'stguard-web-')), 'floats.gguf');
  fs.writeFileSync(file, bytes);
  try {
    const {result} = checkFile(checkSource, file);
    assert.strictEqual(result.verdict, 'valid', JSON.stringify(result));
    const shown = Object.fromEntries(result.contents.metadata);
    for (const [key, , expected] of rows) assert.strictEqual(shown[key], expected, key);
    console.log('gguf float metadata: the page shows the CLI\'s digits');
  } finally {
    fs.rmSync(path.dirname(file), {recursive: true});
  }
}

createStguard({stguardRead, print: () => {}, printErr: (text) => console.error(text)})
    .then((Module) => {
      const checkSource = Module.cwrap('stguard_check_source', 'string',
                                       ['number', 'string', 'number', 'number']);
      let ok = true;
      for (const test of [testThrowingSource, testSparseHuge, testGgufFloatMetadata, testResumable]) {
        try {
          test(checkSource);
        } catch (error) {
          ok = false;
          console.log(`FAIL ${test.name}: ${error.stack}`);
        }
      }
      ok = compareCorpus(checkSource) && ok;
      console.log(ok ? 'node_check_test: passed' : 'node_check_test: FAILED');
      process.exit(ok ? 0 : 1);
    });
