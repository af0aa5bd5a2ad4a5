// The HTTP side of new-device alerts (modules/alerts): which device a sign-in came from. A
// browser carries a long-lived random device cookie (set at its first sign-in, kept 400 days,
// the most a browser keeps a cookie), so an IP change is not a new device; an API client
// is known by its user agent and the device_name it gave for its token.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { User } from '../../db/types.js';
import { apiFingerprint, browserFingerprint, describeUserAgent, isDeviceId, newDeviceId } from '../../modules/alerts/device.js';
import type { SignInChannel, SignInNotice } from '../../modules/alerts/new-device.service.js';
import { localeOf } from '../../plugins/views.js';

export const DEVICE_COOKIE = 'tessera_device';
const DEVICE_COOKIE_DAYS = 400;

/** The browser's device id: the one its cookie holds, or a new one now set (refreshed at each sign-in). */
export function browserDeviceId(app: FastifyInstance, request: FastifyRequest, reply: FastifyReply): string {
  const current = request.cookies[DEVICE_COOKIE];
  const id = isDeviceId(current) ? current : newDeviceId();
  void reply.setCookie(DEVICE_COOKIE, id, {
    path: '/',
    httpOnly: true,
    sameSite: 'lax',
    secure: app.config.appUrl.startsWith('https:'),
    maxAge: DEVICE_COOKIE_DAYS * 24 * 3600,
  });
  return id;
}

/** What a browser sign-in says of its device: its cookie's id, its address, its user agent. */
export function browserNotice(app: FastifyInstance, request: FastifyRequest, reply: FastifyReply): Omit<SignInNotice, 'channel'> {
  return {
    fingerprint: browserFingerprint(browserDeviceId(app, request, reply)),
    ip: request.ip,
    device: describeUserAgent(request.headers['user-agent'] ?? ''),
    locale: localeOf(request, app.config.locale),
  };
}

/** Notices a browser session that starts outside the sign-in pipeline (a registration): records the device. */
export function noticeBrowserSignIn(app: FastifyInstance, request: FastifyRequest, reply: FastifyReply, user: User, channel: Exclude<SignInChannel, 'api'>): void {
  app.services.newDevices.notice(user, { ...browserNotice(app, request, reply), channel });
}

/** What an API token issue says of its device: the client's user agent and the token's device name. */
export function tokenNotice(app: FastifyInstance, request: FastifyRequest, deviceName: string): Omit<SignInNotice, 'channel'> {
  const userAgent = request.headers['user-agent'] ?? '';
  return {
    fingerprint: apiFingerprint(userAgent, deviceName),
    ip: request.ip,
    device: describeUserAgent(userAgent),
    deviceName,
    locale: localeOf(request, app.config.locale),
  };
}
