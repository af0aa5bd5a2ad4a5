// The client side of a timing comparison, run in its own process so that it sees an answer as
// soon as the server has sent it (an in-process client would also wait for whatever work the
// server does right after answering). Reads a JSON plan on argv[2], prints JSON medians.
// Plan: { url, headers, bodies: { known: string[], unknown: string[] }, warmup, tries, pauseMs }.
import http from 'node:http';

const plan = JSON.parse(process.argv[2]);
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const target = new URL(plan.url);

function post(body) {
  return new Promise((resolve, reject) => {
    const start = process.hrtime.bigint();
    const request = http.request(
      { host: target.hostname, port: target.port, path: target.pathname, method: 'POST', agent, headers: { ...plan.headers, 'content-length': Buffer.byteLength(body) } },
      (response) => {
        response.resume();
        response.on('end', () => resolve({ status: response.statusCode, ms: Number(process.hrtime.bigint() - start) / 1e6 }));
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};

const next = { known: 0, unknown: 0 };
const statuses = new Set();
const times = { known: [], unknown: [] };
for (let i = -plan.warmup; i < plan.tries; i += 1) {
  const known = (i % 2 === 0) !== (Math.floor(i / 2) % 2 === 1);
  const kind = known ? 'known' : 'unknown';
  const result = await post(plan.bodies[kind][next[kind]++ % plan.bodies[kind].length]);
  statuses.add(result.status);
  if (i >= 0) times[kind].push(result.ms);
  // Untimed: what the server does after answering one try (a mail) ends before the next starts.
  await new Promise((resolve) => setTimeout(resolve, plan.pauseMs ?? 0));
}
agent.destroy();
process.stdout.write(JSON.stringify({ known: median(times.known), unknown: median(times.unknown), statuses: [...statuses] }));
