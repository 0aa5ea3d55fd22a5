/*
 * index.html of the web UI with what the UI must know before it starts (docs/decisions.md, web
 * UI): a `<base href>` for the base path, so the build's relative asset URLs resolve from any
 * client route, and `window.__TRELLIS__` with the API base path and the auth mode.
 */

/** What the UI is told at boot (packages/web/src/boot-config.ts reads it). */
export interface WebBootConfig {
  readonly basePath: string;
  readonly apiBase: string;
  readonly authMode: 'none' | 'basic' | 'bearer';
  readonly oidc: boolean;
  /** Users or tokens exist: offer the user/password and token form. */
  readonly passwordLogin: boolean;
  readonly version: string;
}

const MARKER = '<!--trellis:config-->';

/** JSON that is safe inside `<script>`: no `</script>`, no `<!--`, no line separators. */
export const scriptJson = (value: unknown): string =>
  JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');

const escapeAttr = (s: string): string =>
  s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');

/**
 * The page with the config in place of the `<!--trellis:config-->` marker, or at the start of
 * `<head>` when the marker is missing.
 */
export const renderIndexHtml = (html: string, boot: WebBootConfig): string => {
  const block =
    `<base href="${escapeAttr(boot.basePath)}/" />` +
    `<script>window.__TRELLIS__=${scriptJson(boot)};</script>`;
  if (html.includes(MARKER)) return html.replace(MARKER, block);
  return html.replace(/<head[^>]*>/i, (m) => `${m}${block}`);
};
