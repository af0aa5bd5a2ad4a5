// Where a "back" redirect may go: the site's pages and the panel's both send the browser back
// to the page it came from (a Referer), or to the page first asked for (kept in the session),
// and both are input. One rule decides what is a path of this site for every one of them.

/**
 * The path itself when a browser can only read it as a path of this site, else null: it starts
 * with one "/" and has no second "/" or "\" after it (browsers read "//host" and "/\host" as
 * another site), no backslash anywhere (browsers turn it into "/") and no control character
 * (browsers drop tabs and newlines, so "/\t/host" becomes "//host"). Percent-encoded slashes
 * ("/%2F%2Fhost") stay: a browser never decodes them into a host.
 */
export function sameSitePath(path: string): string | null {
  if (!path.startsWith('/') || path.startsWith('//')) return null;
  if (/[\\\p{Cc}]/u.test(path)) return null;
  return path;
}

/** A same-site path to go back to, never an absolute URL (no open redirect). */
export function safeBackPath(referer: string | undefined, appUrl: string, fallback = '/'): string {
  if (referer === undefined) return fallback;
  try {
    const url = new URL(referer, appUrl);
    if (url.origin !== new URL(appUrl).origin) return fallback;
    // The URL parser keeps "//host" in a path ("http://site//evil.example/x"): still refused.
    return sameSitePath(`${url.pathname}${url.search}`) ?? fallback;
  } catch {
    return fallback;
  }
}
