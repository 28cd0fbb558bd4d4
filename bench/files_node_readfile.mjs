// The Node.js peer for `uringkit readfiles`: fs.promises.readFile over every
// regular file under DIR, 64 in flight.  The list is gathered first (not
// timed); run with UV_USE_IO_URING=1 or =0 to pick libuv's io_uring path.
//   node bench/files_node_readfile.mjs DIR [inflight]   prints: files bytes seconds files_per_s
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';

async function walk(dir, out) {
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) await walk(p, out);
    else if (e.isFile()) out.push(p);
  }
  return out;
}

const dir = process.argv[2];
const inflight = Number(process.argv[3] || 64);
const files = (await walk(dir, [])).sort();
let next = 0, bytes = 0;
const t0 = process.hrtime.bigint();
async function worker() {
  while (next < files.length) {
    const buf = await readFile(files[next++]);
    bytes += buf.length;
  }
}
await Promise.all(Array.from({ length: inflight }, worker));
const s = Number(process.hrtime.bigint() - t0) / 1e9;
console.log(`${files.length} ${bytes} ${s.toFixed(6)} ${(files.length / s).toFixed(0)}`);
