// The baseline: a bare node:http server answering fixed bytes per path (the service's own
// responses and their content types, captured by the parent), with nothing else in the way.
import { createServer } from 'node:http';

/** What the parent sends: each path's body and content type. */
export type BareMessage = { type: 'bodies'; bodies: Record<string, { body: string; contentType: string }> };

const answers = new Map<string, { body: Buffer; contentType: string }>();
const server = createServer((request, response) => {
  const answer = answers.get(request.url ?? '');
  if (answer === undefined) {
    response.writeHead(404).end();
    return;
  }
  response.writeHead(200, { 'content-type': answer.contentType, 'content-length': answer.body.length });
  response.end(answer.body);
});

process.on('message', (message: BareMessage) => {
  for (const [path, { body, contentType }] of Object.entries(message.bodies)) answers.set(path, { body: Buffer.from(body, 'utf8'), contentType });
  process.send?.({ type: 'bodies-set' });
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.send?.({ type: 'ready', port: typeof address === 'object' && address !== null ? address.port : 0 });
});
