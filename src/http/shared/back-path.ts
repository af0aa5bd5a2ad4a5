// Where a "back" redirect may go: the site's pages and the panel's both send the browser back
// to the page it came from, and a Referer is input.

/** A same-site path to go back to, never an absolute URL (no open redirect). */
export function safeBackPath(referer: string | undefined, appUrl: string, fallback = '/'): string {
  if (referer === undefined) return fallback;
  try {
    const url = new URL(referer, appUrl);
    return url.origin === new URL(appUrl).origin ? `${url.pathname}${url.search}` : fallback;
  } catch {
    return fallback;
  }
}
