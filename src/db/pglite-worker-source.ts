/**
 * The code each PGlite worker thread runs (src/db/pglite-worker.ts), as CommonJS text: no separate
 * file to ship or to compile for the test runner.
 */
export const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const fs = require('node:fs');

// The whole file, read by as few read calls on the thread pool as the system needs (one, for a
// file on disk), started before PGlite's code is loaded so that the two happen at once:
// readFileSync held this thread ~35 ms for the demo's snapshot, and a chunked read would wait for
// it between chunks.
function readWhole(file) {
  return new Promise((resolve, reject) => {
    const fd = fs.openSync(file, 'r');
    const size = fs.fstatSync(fd).size;
    const buf = Buffer.allocUnsafe(size);
    const end = (e, data) => {
      fs.closeSync(fd);
      if (e) reject(e);
      else resolve(data);
    };
    const from = (off) => {
      if (off >= size) return end(undefined, buf);
      fs.read(fd, buf, off, size - off, off, (e, n) => (e ? end(e) : n === 0 ? end(undefined, buf.subarray(0, off)) : from(off + n)));
    };
    from(0);
  });
}
const reading = readWhole(workerData.snapshot);
// PostgreSQL's WebAssembly, compiled once per process: the first worker compiles it (on V8's
// threads, while the snapshot is read) and hands the module to the thread that started it, which
// gives it to every later worker; compiling was about half of each open.
const compiling = workerData.wasm
  ? Promise.resolve(workerData.wasm)
  : fs.promises.readFile(require('node:path').join(require('node:path').dirname(workerData.pglite), 'pglite.wasm')).then((b) => WebAssembly.compile(b));
const { PGlite, MemoryFS } = require(workerData.pglite);
const { vector } = require(workerData.vector);

// The snapshot's entries (ustar: regular files and directories), or undefined when it holds
// anything else, which then goes through PGlite's own loader.
function tarEntries(tar) {
  const text = (from, len) => {
    const end = tar.indexOf(0, from);
    return tar.toString('latin1', from, end === -1 || end > from + len ? from + len : end);
  };
  const entries = [];
  for (let off = 0; off + 512 <= tar.length; ) {
    if (tar[off] === 0) break; // the end-of-archive blocks
    const type = String.fromCharCode(tar[off + 156] || 48);
    const size = parseInt(text(off + 124, 12).trim() || '0', 8);
    const prefix = tar.toString('latin1', off + 257, off + 262) === 'ustar' ? text(off + 345, 155) : '';
    const name = (prefix ? prefix + '/' : '') + text(off, 100);
    if ((type !== '0' && type !== '5') || !Number.isFinite(size) || off + 512 + size > tar.length) return undefined;
    entries.push({ name, dir: type === '5', data: type === '5' ? undefined : tar.subarray(off + 512, off + 512 + size) });
    off += 512 + Math.ceil(size / 512) * 512;
  }
  return entries;
}

// An in-memory file system whose data directory is filled from the snapshot before PostgreSQL
// starts, each file's bytes handed over as a view of the one buffer read from disk (MEMFS copies
// on a write past a file's end): what PGlite's loadDataDir does with a copy of every byte and a
// path lookup per directory level of every file, which was a third of the open. Each file is
// made by its directory's own MEMFS operation (what FS.writeFile does once it has resolved the
// path and opened the file): resolving ~1,000 paths level by level cost ~40 ms of every open.
class SnapshotFS extends MemoryFS {
  constructor(entries) {
    super();
    this.entries = entries;
  }
  async init(pg, opts) {
    const entries = this.entries;
    const fill = (mod) => {
      const FS = mod.FS;
      const root = mod.ENV.PGDATA;
      const dirs = new Map();
      const made = new Set();
      const dir = (d) => {
        let node = dirs.get(d);
        if (!node) {
          FS.mkdirTree(d);
          node = FS.lookupPath(d).node;
          dirs.set(d, node);
        }
        return node;
      };
      dir(root);
      for (const e of entries) {
        const path = root + '/' + e.name.replace(/^\\/+|\\/+$/g, '');
        if (e.dir) {
          dir(path);
          continue;
        }
        const slash = path.lastIndexOf('/');
        const parent = dir(path.slice(0, slash));
        const data = new Uint8Array(e.data.buffer, e.data.byteOffset, e.data.length);
        if (made.has(path) || typeof parent.node_ops.mknod !== 'function') {
          // A name the archive holds twice (the last one wins, as tar extracts) or another file system.
          FS.writeFile(path, data, { canOwn: true });
        } else {
          // A regular file, mode 0666 (FS.writeFile's), owning the view.
          const node = parent.node_ops.mknod(parent, path.slice(slash + 1), 0o100666, 0);
          node.contents = data;
          node.usedBytes = data.length;
        }
        made.add(path);
      }
      this.entries = undefined;
    };
    const { emscriptenOpts } = await super.init(pg, opts);
    return { emscriptenOpts: { ...emscriptenOpts, preRun: [...(emscriptenOpts.preRun || []), fill] } };
  }
}

// Settings for a read-only worker, after the snapshot's own (ALTER SYSTEM's file is read last):
// shared buffers of 16 MB rather than initdb's 128 MB (a buffer miss is a copy from this same
// memory, and the demo's database is about 9 MB) and the few connections a single-user engine
// has, so each worker's memory holds the data about once, not twice; and a new WAL segment made
// without writing its 16 MB of zeros (wal_init_zero = off): the engine prepares the next segment
// when it starts, which in memory cost ~0.15 s of every open.
const SETTINGS = '\\nshared_buffers = 16MB\\nmax_connections = 4\\nwal_init_zero = off\\n';
function open([tar, wasm]) {
  const entries = tarEntries(tar);
  for (const e of entries || [])
    if (e.name.replace(/^\\/+/, '') === 'postgresql.auto.conf') e.data = Buffer.concat([e.data, Buffer.from(SETTINGS)]);
  const source = entries ? { fs: new SnapshotFS(entries) } : { loadDataDir: new Blob([tar]) };
  return PGlite.create({ ...source, extensions: { vector }, pgliteWasmModule: wasm });
}
Promise.all([reading, compiling]).then(open).then(async (db) => {
  // Every transaction of this session is read-only, the implicit one of a lone statement too.
  await db.exec('SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY');
  // Untimed statements first, so the engine's warm-up (and loading pgvector's code, when the
  // database has it) is not charged to the first real query.
  await db.query('SELECT 1');
  await db.query("SELECT '[1,2]'::vector <=> '[2,1]'::vector").catch(() => undefined);
  parentPort.postMessage({ ready: true, wasm: workerData.wasm ? undefined : await compiling });
  parentPort.on('message', async ({ sql, params, settings }) => {
    try {
      // One statement through the extended protocol ('query', never 'exec'), read-only; with
      // run-time parameters, in a transaction that sets them for itself only (SET LOCAL, names
      // and values bound).
      const rows = settings.length
        ? await db.transaction(async (tx) => {
            await tx.exec('SET TRANSACTION READ ONLY');
            for (const [name, value] of settings) await tx.query('SELECT set_config($1, $2, true)', [name, value]);
            return (await tx.query(sql, params)).rows;
          })
        : (await db.query(sql, params)).rows;
      parentPort.postMessage({ rows, at: Date.now() });
    } catch (e) {
      parentPort.postMessage({ error: { message: String(e && e.message), code: e && e.code }, at: Date.now() });
    }
  });
}, (e) => parentPort.postMessage({ fatal: String(e && e.message) }));
`;
