// SPDX-License-Identifier: Apache-2.0
// The worker's RangeCache under node (no browser): every read gets exactly its bytes;
// reads the cache holds cost no request; a miss fetches a block that doubles up to its
// cap; a read near the end fetches a window ending at the end; memory stays under the
// cache's budget; a read outside the file and a short fetch are errors.
// Usage: node range_cache_test.js (worker.js is loaded from ../../web/).
'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const vm = require('node:vm');

const source = fs.readFileSync(path.join(__dirname, '..', '..', 'web', 'worker.js'), 'utf8');
const context = vm.createContext({URL, Date, Uint8Array, Math, Number, Error});
const worker = vm.runInContext(
    `${source}\n({RangeCache, parseContentRange, PREFIX_BYTES, MAX_BLOCK_BYTES, MERGE_BYTES,
                 CACHE_BYTES})`, context);
const {RangeCache, parseContentRange, PREFIX_BYTES, MAX_BLOCK_BYTES, MERGE_BYTES,
       CACHE_BYTES} = worker;

// A file whose byte at i is PATTERN[i % PERIOD]: the period is prime, so a range served
// from the wrong place shows.
const PERIOD = 65521;
const PATTERN = new Uint8Array(PERIOD + MAX_BLOCK_BYTES * 4);
for (let i = 0; i < PATTERN.length; i++) PATTERN[i] = ((i % PERIOD) * 131 + 7) & 0xff;

function byteAt(i) {
  return PATTERN[i % PERIOD];
}

function fakeFile(size) {
  const fetches = [];
  const fetchRange = (begin, end) => {
    assert.ok(0 <= begin && begin < end && end <= size, `bad fetch ${begin}-${end}`);
    fetches.push([begin, end]);
    const bytes = new Uint8Array(end - begin);
    for (let at = 0; at < bytes.length; at += MAX_BLOCK_BYTES) {
      const start = (begin + at) % PERIOD;
      const count = Math.min(MAX_BLOCK_BYTES, bytes.length - at);
      bytes.set(PATTERN.subarray(start, start + count), at);
    }
    return bytes;
  };
  return {fetches, cache: new RangeCache(size, fetchRange, () => {})};
}

function expectBytes(bytes, offset, length) {
  assert.equal(bytes.length, length);
  for (let i = 0; i < length; i += 997) assert.equal(bytes[i], byteAt(offset + i), `byte ${i}`);
  if (length > 0) assert.equal(bytes[length - 1], byteAt(offset + length - 1));
}

const tests = {
  small_reads_share_one_fetch() {
    const {fetches, cache} = fakeFile(16 * 1024 ** 3);
    expectBytes(cache.read(0, 8), 0, 8);
    expectBytes(cache.read(8, 1000), 8, 1000);
    expectBytes(cache.read(4096, 60000), 4096, 60000);
    assert.deepEqual(fetches, [[0, PREFIX_BYTES]]);
  },

  misses_grow_to_the_cap() {
    const {fetches, cache} = fakeFile(1024 ** 3);
    let offset = 0;
    for (let i = 0; i < 12; i++) {
      const [, end] = fetches.length ? fetches[fetches.length - 1] : [0, 0];
      offset = end;
      expectBytes(cache.read(offset, 10), offset, 10);
    }
    const sizes = fetches.map(([begin, end]) => end - begin);
    for (let i = 1; i < sizes.length; i++) {
      assert.equal(sizes[i], Math.min(sizes[i - 1] * 2, MAX_BLOCK_BYTES), `fetch ${i}`);
    }
    assert.equal(sizes[sizes.length - 1], MAX_BLOCK_BYTES);
  },

  a_read_spanning_cached_and_new_bytes_fetches_only_the_new() {
    const {fetches, cache} = fakeFile(10 * 1024 * 1024);
    cache.read(0, 8);
    expectBytes(cache.read(PREFIX_BYTES - 100, 300), PREFIX_BYTES - 100, 300);
    assert.equal(fetches[1][0], PREFIX_BYTES);
    expectBytes(cache.read(0, PREFIX_BYTES + 200), 0, PREFIX_BYTES + 200);
    assert.equal(fetches.length, 2);
  },

  a_read_near_the_end_fetches_a_window_ending_there() {
    const size = 5 * 1024 * 1024 + 17;
    const {fetches, cache} = fakeFile(size);
    expectBytes(cache.read(size - 22, 22), size - 22, 22);
    assert.deepEqual(fetches, [[size - PREFIX_BYTES, size]]);
    expectBytes(cache.read(size - 5000, 4000), size - 5000, 4000);
    assert.equal(fetches.length, 1);
  },

  memory_stays_under_the_budget() {
    const {cache} = fakeFile(4 * 1024 ** 3);
    for (let offset = 0; offset < 1024 ** 3; offset += 5 * 1024 * 1024) {
      expectBytes(cache.read(offset, 1024 * 1024), offset, 1024 * 1024);
      const held = cache.segments.reduce((sum, s) => sum + s.bytes.length, 0);
      assert.ok(held <= CACHE_BYTES + MERGE_BYTES, `${held} bytes held`);
    }
  },

  a_sequential_walk_merges_only_up_to_the_cap() {
    const {fetches, cache} = fakeFile(4 * 1024 ** 3);
    for (let offset = 0; offset < 256 * 1024 * 1024; offset += 4096) {
      const bytes = cache.read(offset, 4096);
      if (offset % (1024 * 1024) === 0) expectBytes(bytes, offset, 4096);
      assert.ok(cache.segments.every((s) => s.bytes.length <= MERGE_BYTES));
    }
    const fetched = fetches.reduce((sum, [begin, end]) => sum + end - begin, 0);
    assert.ok(fetched < 256 * 1024 * 1024 + 2 * MAX_BLOCK_BYTES, `${fetched} bytes fetched`);
    const held = cache.segments.reduce((sum, s) => sum + s.bytes.length, 0);
    assert.ok(held <= CACHE_BYTES + MERGE_BYTES, `${held} bytes held`);
  },

  a_large_read_is_exact_and_not_kept() {
    const {cache} = fakeFile(1024 ** 3);
    const length = 40 * 1024 * 1024;
    expectBytes(cache.read(1000, length), 1000, length);
    assert.ok(cache.segments.every((s) => s.bytes.length < length));
  },

  reads_outside_the_file_are_errors() {
    const {fetches, cache} = fakeFile(1000);
    assert.throws(() => cache.read(990, 11), /outside the file/);
    assert.throws(() => cache.read(-1, 1), /outside the file/);
    assert.throws(() => cache.read(2 ** 53, 1), /outside the file/);
    assert.equal(cache.read(1000, 0).length, 0);
    assert.deepEqual(fetches, []);
  },

  a_seeded_prefix_is_served_without_a_request() {
    const {fetches, cache} = fakeFile(1024 ** 2);
    const prefix = new Uint8Array(PREFIX_BYTES).map((_, i) => byteAt(i));
    cache.seed(0, prefix);
    expectBytes(cache.read(100, 5000), 100, 5000);
    assert.deepEqual(fetches, []);
    assert.equal(cache.requests, 1);
    assert.equal(cache.bytesFetched, PREFIX_BYTES);
  },

  // Without a fetcher (a URL, fetched asynchronously by checkRemote) a miss answers null
  // and remembers the first missed read; once the window around it is kept, it is served.
  an_async_cache_remembers_its_first_miss() {
    const size = 1024 ** 2;
    const cache = new RangeCache(size, null, () => {});
    cache.seed(0, new Uint8Array(PREFIX_BYTES).map((_, i) => byteAt(i)));
    expectBytes(cache.read(10, 100), 10, 100);
    assert.equal(cache.read(PREFIX_BYTES + 10, 100), null);
    assert.equal(cache.read(size - 10, 10), null);
    assert.deepEqual({...cache.pending}, {offset: PREFIX_BYTES + 10, length: 100});
    assert.equal(cache.holds(0, size), false);
    const {begin, end, merge} = cache.window(cache.pending.offset, cache.pending.length);
    assert.equal(begin, PREFIX_BYTES + 10);
    const bytes = new Uint8Array(end - begin).map((_, i) => byteAt(begin + i));
    cache.keep(begin, bytes, merge);
    expectBytes(cache.read(PREFIX_BYTES + 10, 100), PREFIX_BYTES + 10, 100);
    assert.equal(cache.holds(begin, end), true);
    assert.equal(cache.holds(0, end), false, 'the 10 bytes before the window are held');
  },

  content_range_is_parsed_strictly() {
    assert.deepEqual({...parseContentRange('bytes 0-65535/17179869296')},
                     {first: 0, last: 65535, total: 17179869296});
    assert.deepEqual({...parseContentRange('bytes */0')}, {first: null, last: null, total: 0});
    assert.equal(parseContentRange('bytes 0-65535/*').total, null);
    assert.equal(parseContentRange(null), null);
    assert.equal(parseContentRange('bytes=0-10/20'), null);
    assert.equal(parseContentRange('bytes 0-10'), null);
    assert.equal(parseContentRange('items 0-10/20'), null);
  },
};

let failures = 0;
for (const [name, test] of Object.entries(tests)) {
  try {
    test();
    console.log(`PASS ${name}`);
  } catch (error) {
    failures += 1;
    console.log(`FAIL ${name}: ${error.message}`);
  }
}
console.log(failures ? `${failures} failed` : `all ${Object.keys(tests).length} passed`);
process.exit(failures ? 1 : 0);
