// SPDX-License-Identifier: Apache-2.0
// The page's worker: it runs stguard's WebAssembly build and gives it bytes.
//
// stguard reads a file by ranges (read `length` bytes at `offset`), synchronously. This
// worker answers those reads from two kinds of source:
// - a dropped or chosen File, read with FileReaderSync (nothing leaves the machine);
// - a URL, read with asynchronous, streamed, budgeted range requests (fetch with an
//   AbortController). The WebAssembly reader cannot wait for them, so a URL's check is
//   resumable: it runs over the bytes held, asks for the range it missed, and runs again
//   once it is fetched (checkRemote; web/GLUE.md says why this design).
// Both go through one cache (RangeCache), so the reader's many small reads cost a few
// growing requests: a 16 GB safetensors file is judged from its first kilobytes.
//
// Messages from the page: {kind: 'file', id, file}, {kind: 'url', id, url},
// {kind: 'folder', id, name, entries: [{path, file}]}. Answers: {kind: 'progress', id,
// read, total, requests} while reading a file or URL, {kind: 'progress', id, read, total,
// files, totalFiles, current} while checking a folder (bytes read of the folder's total,
// files opened so far of its count, the path being read), and {kind: 'done', id, result,
// stats} once (result: the envelope, parsed). Jobs run one at a time, in order; the page
// runs several workers (app.js) and gives each one job at a time, and ends a worker to
// cancel its job (a File's synchronous read inside WebAssembly cannot be interrupted).
'use strict';

// PREFIX_BYTES is what the first read of a source fetches: enough for the header of
// most checkpoints, so that a safetensors verdict usually costs one request.
const PREFIX_BYTES = 64 * 1024;
// A miss fetches at least the next block size, which doubles on every miss up to
// MAX_BLOCK_BYTES: a reader walking a long header makes a logarithmic number of requests.
const MAX_BLOCK_BYTES = 16 * 1024 * 1024;
// A fetched range is merged with the cached ranges it touches while the result stays
// under MERGE_BYTES (so a header read in growing pieces becomes one range); past that it
// replaces them, so that a reader walking a large file never copies more than this.
const MERGE_BYTES = 2 * MAX_BLOCK_BYTES;
// The cache keeps at most CACHE_BYTES besides the range last fetched, dropping the least
// recently used ranges first; a single read larger than KEEP_BYTES (tensor data read for
// a checksum) is served but not kept, unless it completes cached ranges. Memory stays bounded whatever the file's size.
const CACHE_BYTES = 64 * 1024 * 1024;
const KEEP_BYTES = 4 * 1024 * 1024;
// REMOTE_BUDGET_BYTES is what one URL may cost, every byte received counted: the checks
// read headers (a remote reader skips what needs more, and says so), so a 2 GiB file
// costs at most this whatever its server does.
const REMOTE_BUDGET_BYTES = 64 * 1024 * 1024;
// MAX_ROUNDS bounds the runs of a resumable check, i.e. the requests of one URL.
const MAX_ROUNDS = 100;
// A request that has not finished after this long is abandoned: a stalled server is an
// error, never a page that waits for ever.
const REQUEST_TIMEOUT_MS = 60 * 1000;
// Progress is posted at most this often (the page redraws on each message).
const PROGRESS_INTERVAL_MS = 100;
// A folder's read of at least this many bytes is reported at once, whatever the interval.
const LARGE_READ_BYTES = 1024 * 1024;

// SourceError is a failure of a source itself (network, CORS, server), reported as the
// verdict "error" with code IoError and this message.
class SourceError extends Error {}

function segmentEnd(segment) {
  return segment.begin + segment.bytes.length;
}

// RangeCache answers read(offset, length) from ranges fetched earlier, and fetches a
// growing block around a read it cannot answer. `fetchRange(begin, end)` returns exactly
// the bytes [begin, end) or throws; without one (null: a URL, fetched asynchronously) a
// read it cannot answer returns null and is remembered in `pending`. Its ranges (segments) never overlap or touch.
class RangeCache {
  constructor(size, fetchRange, onFetched) {
    this.size = size;
    this.fetchRange = fetchRange;
    this.onFetched = onFetched;
    this.segments = [];  // {begin, bytes, used}
    this.nextBlock = PREFIX_BYTES;
    this.clock = 0;
    this.bytesFetched = 0;
    this.requests = 0;
    this.pending = null;  // without fetchRange: the first read not answered
  }

  // holds says whether [begin, end) is cached (segments never touch, so one holds it).
  holds(begin, end) {
    return begin === end ||
           this.segments.some((s) => s.begin <= begin && end <= segmentEnd(s));
  }

  // seed keeps bytes fetched before the cache existed (a URL's first response).
  seed(begin, bytes) {
    this.bytesFetched += bytes.length;
    this.requests += 1;
    this.keep(begin, bytes, false);
    this.nextBlock = Math.min(PREFIX_BYTES * 2, MAX_BLOCK_BYTES);
  }

  read(offset, length) {
    if (!Number.isSafeInteger(offset) || !Number.isSafeInteger(length) || offset < 0 ||
        length < 0 || offset > this.size || length > this.size - offset) {
      throw new Error(`read of ${length} bytes at ${offset} is outside the file ` +
                      `(${this.size} bytes)`);
    }
    if (length === 0) return new Uint8Array(0);
    const hit = this.segments.find((s) => s.begin <= offset && offset + length <= segmentEnd(s));
    if (hit) return this.slice(hit, offset, length);
    if (this.fetchRange === null) {
      // Fetched asynchronously by the caller (checkRemote), which then runs the check again.
      if (this.pending === null) this.pending = {offset, length};
      return null;
    }
    const {begin, end, merge} = this.window(offset, length);
    const bytes = this.fetchRange(begin, end);
    this.bytesFetched += bytes.length;
    this.requests += 1;
    this.onFetched(this);
    if (!merge && length > KEEP_BYTES) {
      return bytes.subarray(offset - begin, offset - begin + length);
    }
    return this.slice(this.keep(begin, bytes, merge), offset, length);
  }

  slice(segment, offset, length) {
    segment.used = ++this.clock;
    const at = offset - segment.begin;
    return segment.bytes.subarray(at, at + length);
  }

  // window chooses the range to fetch for a read the cache cannot answer: at least the
  // current block size, ending at the file's end when the read is near it (a ZIP's end
  // records are read backwards from there). When the result of merging stays under
  // MERGE_BYTES, the range is trimmed where cached bytes already are ({merge: true});
  // otherwise it is fetched whole, to stand alone.
  window(offset, length) {
    const want = Math.max(length, this.nextBlock);
    this.nextBlock = Math.min(this.nextBlock * 2, MAX_BLOCK_BYTES);
    const end = Math.min(this.size, offset + want);
    const begin = Math.max(0, Math.min(offset, end - want));
    let trimmedBegin = begin;
    let trimmedEnd = end;
    for (const segment of this.segments) {
      if (segment.begin <= begin && begin < segmentEnd(segment)) trimmedBegin = segmentEnd(segment);
      if (segment.begin < end && end <= segmentEnd(segment)) trimmedEnd = segment.begin;
    }
    const merged = this.touching(trimmedBegin, trimmedEnd)
                       .reduce((sum, s) => sum + s.bytes.length, trimmedEnd - trimmedBegin);
    if (merged <= MERGE_BYTES) return {begin: trimmedBegin, end: trimmedEnd, merge: true};
    return {begin, end, merge: false};
  }

  touching(begin, end) {
    return this.segments.filter((s) => s.begin <= end && begin <= segmentEnd(s));
  }

  // keep stores [begin, begin + bytes.length), merged with the ranges it touches when
  // `merge`, else in their place, and returns its segment; then drops the least recently
  // used segments over the budget.
  keep(begin, bytes, merge) {
    const end = begin + bytes.length;
    const touching = this.touching(begin, end);
    this.segments = this.segments.filter((s) => !touching.includes(s));
    let segment = {begin, bytes, used: ++this.clock};
    if (merge && touching.length > 0) {
      const mergedBegin = Math.min(begin, ...touching.map((s) => s.begin));
      const mergedEnd = Math.max(end, ...touching.map(segmentEnd));
      const merged = new Uint8Array(mergedEnd - mergedBegin);
      for (const old of touching) merged.set(old.bytes, old.begin - mergedBegin);
      merged.set(bytes, begin - mergedBegin);
      segment = {begin: mergedBegin, bytes: merged, used: segment.used};
    }
    this.segments.push(segment);
    this.evict(segment);
    return segment;
  }

  evict(newest) {
    let total = this.segments.reduce((sum, s) => sum + s.bytes.length, 0) - newest.bytes.length;
    const oldestFirst = this.segments.filter((s) => s !== newest).sort((a, b) => a.used - b.used);
    for (const segment of oldestFirst) {
      if (total <= CACHE_BYTES) break;
      this.segments.splice(this.segments.indexOf(segment), 1);
      total -= segment.bytes.length;
    }
  }
}

// ---------------------------------------------------------------------------------------
// Files

function fileFetcher(file) {
  const reader = new FileReaderSync();
  return (begin, end) => {
    const buffer = reader.readAsArrayBuffer(file.slice(begin, end));
    if (buffer.byteLength !== end - begin) {
      throw new Error(`the file changed while it was read: ${buffer.byteLength} bytes ` +
                      `where ${end - begin} were asked at ${begin}`);
    }
    return new Uint8Array(buffer);
  };
}

// ---------------------------------------------------------------------------------------
// URLs
//
// The remote-read policy (the command line's words, so that the two say the same):
// - Budget: a URL costs at most REMOTE_BUDGET_BYTES received, every response counted.
//   Each response is read as a stream and stopped (AbortController) as soon as it carries
//   more than the range asked for, so a server that ignores Range, honours it once, or
//   answers 206 with the whole body costs the range asked plus one network chunk.
// - Consistency: a status other than 206, a Content-Range naming other bytes than asked,
//   a total size that changes between requests, a body shorter than its headers, a
//   connection closed early are errors that say what happened: never a verdict on the
//   file. A 200 (Range ignored) is accepted only when the whole file arrived within the
//   range asked (a small file: the bytes received suffice for every check).
// - The check is resumable (web/src/stguard_web.cc): it runs over the bytes held, says
//   which it needs next, and runs again once they are fetched, at most MAX_ROUNDS times.
//   Once every byte of the file is held, it runs as for a local file: every check.

// parseContentRange reads "bytes FIRST-LAST/TOTAL" (or "bytes */TOTAL" of a 416); null
// when absent or malformed. TOTAL "*" (unknown) gives total null.
function parseContentRange(value) {
  if (value === null) return null;
  let match = /^\s*bytes\s+(\d+)-(\d+)\/(\d+|\*)\s*$/i.exec(value);
  if (match) {
    return {first: Number(match[1]), last: Number(match[2]),
            total: match[3] === '*' ? null : Number(match[3])};
  }
  match = /^\s*bytes\s+\*\/(\d+)\s*$/i.exec(value);
  if (match) return {first: null, last: null, total: Number(match[1])};
  return null;
}

function isCrossOrigin(url) {
  return new URL(url).origin !== self.location.origin;
}

const CORS_HELP = 'a page may read another site only if its server allows it: it must ' +
    'answer with Access-Control-Allow-Origin (and Access-Control-Expose-Headers: ' +
    'Content-Range, so that the page learns the size)';

function networkFailure(url, error) {
  if (isCrossOrigin(url)) {
    return new SourceError(`cannot read ${url}: the request failed; either the server ` +
                           `is unreachable or it does not allow this page to read it ` +
                           `(CORS): ${CORS_HELP}`);
  }
  return new SourceError(`cannot read ${url}: the request failed (${error.message || error})`);
}

function missingContentRange(url) {
  if (isCrossOrigin(url)) {
    return new SourceError(`cannot read ${url}: the server answered the range request ` +
                           `but does not let this page see its Content-Range header, so ` +
                           `the file's size is unknown (CORS: the server must send ` +
                           `Access-Control-Expose-Headers: Content-Range)`);
  }
  return new SourceError(`cannot read ${url}: the server's range answer has no valid ` +
                         `Content-Range header, so the file's size is unknown`);
}

function noRangeSupport(url, what, received) {
  return new SourceError(`cannot read ${url}: the server does not honour range requests ` +
                         `(${what}); the transfer was stopped after ${received} bytes`);
}

function badStatus(url, status, statusText) {
  return new SourceError(`cannot read ${url}: the server answered ${status}` +
                         (statusText ? ` ${statusText}` : ''));
}

function timedOut(url) {
  return new SourceError(`cannot read ${url}: no answer within ` +
                         `${REQUEST_TIMEOUT_MS / 1000} seconds`);
}

// RemoteFile makes a URL's range requests, each budgeted, streamed and abortable, and
// counts every request and every byte received. `onProgress(remote)` follows each chunk.
class RemoteFile {
  constructor(url, onProgress) {
    this.url = url;
    this.onProgress = onProgress;
    this.size = null;  // learnt from the first answer
    this.received = 0;
    this.requests = 0;
  }

  // read returns exactly the bytes [begin, end) (the first read: [0, min(end, size)),
  // setting size), or throws a SourceError.
  async read(begin, end) {
    if (this.received + (end - begin) > REMOTE_BUDGET_BYTES) {
      throw new SourceError(`cannot read ${this.url}: the checks need more than the ` +
                            `budget of ${REMOTE_BUDGET_BYTES} bytes for a remote file ` +
                            `(${this.received} bytes received in ${this.requests} requests)`);
    }
    const controller = new AbortController();
    let late = false;
    const timer = setTimeout(() => {
      late = true;
      controller.abort();
    }, REQUEST_TIMEOUT_MS);
    this.requests += 1;
    this.onProgress(this);
    try {
      return await this.exchange(begin, end, controller);
    } catch (error) {
      if (late) throw timedOut(this.url);
      if (error instanceof SourceError) throw error;
      throw networkFailure(this.url, error);
    } finally {
      clearTimeout(timer);
      controller.abort();  // nothing more is read from this response
    }
  }

  async exchange(begin, end, controller) {
    const url = this.url;
    const response = await fetch(url, {headers: {Range: `bytes=${begin}-${end - 1}`},
                                       signal: controller.signal, cache: 'no-store',
                                       credentials: 'omit', redirect: 'follow'});
    const range = parseContentRange(response.headers.get('Content-Range'));
    const first = this.size === null;
    if (response.status === 416 && first && range && range.total === 0) {
      this.size = 0;
      return new Uint8Array(0);
    }
    if (response.status === 200) {
      // Range ignored: the body is the whole file, kept only if it fits in what was asked.
      const body = await this.body(response, end - begin, 'whole file');
      if (!first && body.length !== this.size) this.sizeChanged(body.length);
      this.size = body.length;
      return body;
    }
    if (response.status !== 206) throw badStatus(url, response.status, response.statusText);
    if (!range || range.total === null || range.first === null) throw missingContentRange(url);
    if (!first && range.total !== this.size) this.sizeChanged(range.total);
    const last = Math.min(end, range.total) - 1;
    if (range.first !== begin || range.last !== last) {
      if (range.first === begin && range.last > last) {
        throw noRangeSupport(url, `it answered bytes ${range.first}-${range.last} where ` +
                                  `${begin}-${last} were asked`, this.received);
      }
      throw new SourceError(`cannot read ${url}: the server's Content-Range names other ` +
                            `bytes (${range.first}-${range.last}) than the range asked ` +
                            `for (${begin}-${last})`);
    }
    const length = last - begin + 1;
    const declared = response.headers.get('Content-Length');
    if (declared !== null && Number(declared) !== length) {
      throw new SourceError(`cannot read ${url}: the server's Content-Length (${declared}) ` +
                            `and Content-Range (${range.first}-${range.last}) disagree`);
    }
    this.size = range.total;
    const body = await this.body(response, length, 'range');
    if (body.length !== length) {
      throw new SourceError(`cannot read ${url}: the body is shorter than its headers: ` +
                            `${body.length} bytes where Content-Range says ${length}`);
    }
    return body;
  }

  sizeChanged(now) {
    throw new SourceError(`cannot read ${this.url}: the file's total size changed between ` +
                          `requests: ${this.size} bytes, then ${now}`);
  }

  // body reads the response as a stream, at most `limit` bytes: past that the transfer
  // is stopped (the caller aborts it) and the server named as not honouring Range.
  async body(response, limit, kind) {
    if (response.body === null) return new Uint8Array(0);
    const reader = response.body.getReader();
    const out = new Uint8Array(limit);
    let got = 0;
    for (;;) {
      let part;
      try {
        part = await reader.read();
      } catch (error) {
        throw new SourceError(`cannot read ${this.url}: the connection closed early, after ` +
                              `${got} bytes of the body (${error.message || error})`);
      }
      if (part.done) return out.subarray(0, got);
      this.received += part.value.length;
      this.onProgress(this);
      if (got + part.value.length > limit) {
        throw noRangeSupport(this.url, kind === 'whole file'
            ? 'the server sent the whole file instead of the range asked for'
            : 'it sent more bytes than its Content-Range says', this.received);
      }
      out.set(part.value, got);
      got += part.value.length;
    }
  }
}

// checkRemote judges a URL: its first read learns the size; then the resumable check runs
// over the cache, and each time it needs bytes not held, they are fetched and it runs again.
async function checkRemote(remote, name) {
  const prefix = await remote.read(0, PREFIX_BYTES);
  const cache = new RangeCache(remote.size, null, () => {});
  if (prefix.length > 0) cache.seed(0, prefix);
  for (let round = 1; ; round++) {
    const whole = cache.holds(0, cache.size);
    const result = checkCache(cache, name, !whole);
    if (!result.need) return result;
    if (round >= MAX_ROUNDS) {
      throw new SourceError(`cannot read ${remote.url}: the checks asked for more ranges ` +
                            `than ${MAX_ROUNDS} requests`);
    }
    const {begin, end, merge} = cache.window(cache.pending.offset, cache.pending.length);
    cache.pending = null;
    cache.keep(begin, await remote.read(begin, end), merge);
  }
}

// ---------------------------------------------------------------------------------------
// The module and the jobs

// EINVAL in emscripten's errno numbering (WASI's).
const EINVAL = 28;

let stguard = null;  // set once the WebAssembly module has started
const sources = new Map();  // source id -> RangeCache, while a check runs
let nextSourceId = 1;
// While a folder is checked: called with (the file's path, bytes read) on each read of
// one of its files (the library's reads, and the copies that stand in for a mapping).
let onFolderRead = null;

// startStguard loads stguard.js beside this script, starts its module (web/GLUE.md) and
// wraps its two entry points.
async function startStguard() {
  importScripts('stguard.js');
  const stguardRead = (sourceId, offset, length) => {
    const source = sources.get(sourceId);
    if (!source) throw new Error(`no source ${sourceId}`);
    return source.read(Number(offset), Number(length));
  };
  const module = await createStguard({stguardRead});
  module.stguardRead = stguardRead;
  const WORKERFS = module.WORKERFS || module.FS.filesystems.WORKERFS;
  // WORKERFS holds no links, yet answers readlink with EPERM where a file system without
  // a link there says EINVAL ("not a link"): realpath() then fails on every dropped
  // folder ("cannot resolve folder"). Say what is true: no file of the mount is a link.
  WORKERFS.node_ops.readlink = () => {
    throw new module.FS.ErrnoError(EINVAL);
  };
  // Every read of a dropped folder's file passes here, so a folder check can show what
  // it has read (web/src/workerfs_mmap.js copies a mapping through it, in pieces).
  const read = WORKERFS.stream_ops.read;
  WORKERFS.stream_ops.read = (stream, buffer, offset, length, position) => {
    const bytes = read(stream, buffer, offset, length, position);
    if (onFolderRead) onFolderRead(module.FS.getPath(stream.node), bytes);
    return bytes;
  };
  return {
    checkSource: module.cwrap('stguard_check_source', 'string',
                              ['number', 'string', 'number', 'number']),
    checkFolder: module.cwrap('stguard_check_folder', 'string', ['string']),
    FS: module.FS,
    WORKERFS,
  };
}

function progressReporter(id) {
  let last = 0;
  return (counts, force) => {
    const now = Date.now();
    if (!force && now - last < PROGRESS_INTERVAL_MS) return;
    last = now;
    postMessage({kind: 'progress', id, read: counts.read, total: counts.size,
                 requests: counts.requests});
  };
}

// errorEnvelope is the result for a check that never reached stguard (the source could
// not be opened, or the module failed): the front door's verdict "error".
function errorEnvelope(file, message) {
  return {schema_version: 2, file, format: 'unknown', verdict: 'error', code: 'IoError',
          message, tensor: '', verdict_line: 'error', unchecked: []};
}

function parseAnswer(file, text) {
  try {
    return JSON.parse(text);
  } catch (error) {
    return errorEnvelope(file, `stguard's answer is not JSON (${error.message})`);
  }
}

// checkCache runs checkSource once over a cache and forgets the source afterwards; the
// answer is a result, or {need: true} when a read missed (cache.pending says which).
function checkCache(cache, name, remote) {
  const sourceId = nextSourceId++;
  sources.set(sourceId, cache);
  try {
    return parseAnswer(name, stguard.checkSource(sourceId, name, cache.size, remote ? 1 : 0));
  } finally {
    sources.delete(sourceId);
  }
}

async function checkFileJob(job) {
  const report = progressReporter(job.id);
  const counts = (c) => ({read: c.bytesFetched, requests: c.requests, size: c.size});
  const cache = new RangeCache(job.file.size, fileFetcher(job.file), (c) => report(counts(c)));
  const result = checkCache(cache, job.file.name, false);
  report(counts(cache), true);
  return {result, stats: counts(cache)};
}

async function checkUrlJob(job) {
  const report = progressReporter(job.id);
  const counts = (r) => ({read: r.received, requests: r.requests, size: r.size || 0});
  const remote = new RemoteFile(job.url, (r) => report(counts(r)));
  try {
    const result = await checkRemote(remote, job.url);
    return {result, stats: counts(remote)};
  } catch (error) {
    if (!(error instanceof SourceError)) throw error;
    return {result: errorEnvelope(job.url, error.message), stats: counts(remote)};
  } finally {
    report(counts(remote), true);
  }
}

// folderProgress counts a folder check's reads: the bytes, and the files opened (a file
// counts once it is first read; the walk sniffs each, then reads some further), and
// posts them at most every PROGRESS_INTERVAL_MS, and after each large read (one piece
// of a file copied whole: each is slow enough to be seen). report(true) posts at once;
// report(true, true) is the final count, with no file being read.
function folderProgress(job, mountPoint) {
  const state = {read: 0, total: job.entries.reduce((sum, e) => sum + e.file.size, 0),
                 opened: new Set(), current: ''};
  // The path within the folder, as the results name the folder's files.
  const folderPrefix = `${mountPoint}/${job.name}/`;
  let last = 0;
  const report = (force, final = false) => {
    const now = Date.now();
    if (!force && now - last < PROGRESS_INTERVAL_MS) return;
    last = now;
    postMessage({kind: 'progress', id: job.id, read: state.read, total: state.total,
                 files: state.opened.size, totalFiles: job.entries.length,
                 current: final ? '' : state.current});
  };
  const onRead = (path, bytes) => {
    const inFolder = path.startsWith(folderPrefix) ? path.slice(folderPrefix.length) : path;
    state.read += bytes;
    state.opened.add(inFolder);
    state.current = inFolder;
    report(bytes >= LARGE_READ_BYTES);
  };
  const stats = () => ({read: state.read, size: state.total, files: state.opened.size,
                        totalFiles: job.entries.length});
  return {onRead, report, stats};
}

// checkFolderJob mounts the folder's files (their paths kept, read lazily from the
// Files) under a fresh directory and checks it as stguard checks a folder on disk.
async function checkFolderJob(job) {
  const FS = stguard.FS;
  const mountPoint = `/drop/${job.id}`;
  FS.mkdirTree(mountPoint);
  FS.mount(stguard.WORKERFS, {blobs: job.entries.map((e) => ({name: e.path, data: e.file}))},
           mountPoint);
  const progress = folderProgress(job, mountPoint);
  progress.report(true, true);
  onFolderRead = progress.onRead;
  try {
    const path = `${mountPoint}/${job.name}`;
    const answer = stguard.checkFolder(path);
    return {result: parseAnswer(job.name, answer), stats: progress.stats(), prefix: `${path}/`};
  } finally {
    onFolderRead = null;
    progress.report(true, true);
    FS.unmount(mountPoint);
    FS.rmdir(mountPoint);
  }
}

const JOBS = {file: checkFileJob, url: checkUrlJob, folder: checkFolderJob};

function jobName(job) {
  return job.kind === 'url' ? job.url : job.kind === 'file' ? job.file.name : job.name;
}

// runJobs starts the module and then serves the page's jobs in order. (Outside a
// worker, as when a test loads this file to exercise RangeCache, nothing starts.)
function runJobs() {
  let queue = Promise.resolve();
  const started = startStguard().then((module) => {
    stguard = module;
    postMessage({kind: 'ready'});
  }, (error) => {
    postMessage({kind: 'failed', message: String((error && error.message) || error)});
  });
  self.onmessage = (event) => {
    const job = event.data;
    queue = queue.then(async () => {
      let answer;
      try {
        await started;
        answer = await JOBS[job.kind](job);
      } catch (error) {
        const message = stguard === null ? `stguard could not start: ${error.message || error}`
                                         : `the check failed: ${error.message || error}`;
        answer = {result: errorEnvelope(jobName(job), message), stats: null};
      }
      postMessage({kind: 'done', id: job.id, result: answer.result, stats: answer.stats,
                   prefix: answer.prefix || ''});
    });
  };
}

if (typeof WorkerGlobalScope !== 'undefined' && self instanceof WorkerGlobalScope) runJobs();
