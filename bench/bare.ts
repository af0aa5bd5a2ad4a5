// The baseline: a bare node:http server answering fixed bytes per path (the service's own
// responses, captured by the parent), with nothing else in the way.
import { createServer } from 'node:http';

const bodies = new Map<string, Buffer>();
const server = createServer((request, response) => {
  const body = bodies.get(request.url ?? '');
  if (body === undefined) {
    response.writeHead(404).end();
    return;
  }
  response.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length });
  response.end(body);
});

process.on('message', (message: { type: 'bodies'; bodies: Record<string, string> }) => {
  for (const [path, body] of Object.entries(message.bodies)) bodies.set(path, Buffer.from(body, 'utf8'));
  process.send?.({ type: 'bodies-set' });
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.send?.({ type: 'ready', port: typeof address === 'object' && address !== null ? address.port : 0 });
});
