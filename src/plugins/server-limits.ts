// The HTTP server's own limits, passed to Fastify() in app.ts: slow clients (slowloris) and
// oversized headers are cut off by Node's HTTP server before any route runs. Bodies are limited
// by Fastify's bodyLimit (413).
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { Config } from '../config.js';

/** Node's default, stated so that it is a decision: larger headers get 431. */
export const MAX_HEADER_SIZE = 16 * 1024;

// Node checks request and header timeouts on a timer (every 30 s by default), so a slow client
// could outlive REQUEST_TIMEOUT by that much; a fraction of the timeout keeps the cut-off close.
function checkingInterval(requestTimeoutMs: number): number {
  return Math.min(5000, Math.max(100, Math.floor(requestTimeoutMs / 4)));
}

/**
 * A connection-level error (malformed request, headers too large, request timeout) is answered
 * with the API's envelope and the socket is closed; no route and no log line with the request.
 */
export function clientErrorHandler(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const status = error.code === 'HPE_HEADER_OVERFLOW' ? 431 : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
  const body = JSON.stringify({ message: `${STATUS_CODES[status] ?? 'Bad Request'}.`, errors: {} });
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}

/** Fastify server options for the limits above; REQUEST_TIMEOUT=0 leaves the timeouts off. */
export function serverLimitOptions(config: Pick<Config, 'requestTimeoutMs'>) {
  const timeout = config.requestTimeoutMs;
  return {
    // requestTimeout: the whole request (headers and body) must arrive within it.
    // connectionTimeout: a socket idle for that long is closed.
    requestTimeout: timeout,
    connectionTimeout: timeout,
    http: {
      maxHeaderSize: MAX_HEADER_SIZE,
      ...(timeout > 0
        ? { requestTimeout: timeout, headersTimeout: Math.min(timeout, 60_000), connectionsCheckingInterval: checkingInterval(timeout) }
        : {}),
    },
    clientErrorHandler,
  };
}
