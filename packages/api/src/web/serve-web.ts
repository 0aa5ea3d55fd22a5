import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import express, { Router, type Request, type Response } from 'express';
import type { Authenticator } from '../http/auth.js';
import { compressedAssets } from './compressed-assets.js';
import { describeSession } from './session.js';
import { renderIndexHtml, type WebBootConfig } from './web-page.js';

/** Options of {@link createWebRouter}. */
export interface WebOptions {
  /** The built UI (packages/web/dist): index.html and assets/. */
  readonly root: string;
  readonly authMode: WebBootConfig['authMode'];
  /** OpenID Connect sign-in is configured. @default false */
  readonly oidc?: boolean;
  /** Users or tokens are configured: the UI offers its password and token form. @default true */
  readonly passwordLogin?: boolean;
  /** Extra routes under `<basePath>/auth` (OIDC sign-in). */
  readonly authRouter?: Router;
  /** True when the request was authenticated by the OIDC session cookie. */
  readonly viaCookie?: (req: Request) => boolean;
}

/** Hashed bundles never change under their name: cache them for a year. */
const IMMUTABLE = 'public, max-age=31536000, immutable';

/**
 * The web UI at `<basePath>/`: files under `assets/` with a year's cache (their names carry a
 * content hash), index.html with `no-cache` (so a new build is seen at once) for `/` and for
 * every client route (any GET that is no file and not under `/api`), and `/auth/session` for the
 * UI's login. Assets go out brotli- or gzip-compressed when the build precompressed them and the
 * browser accepts it (compressed-assets.ts). A missing build answers 503 saying how to build it.
 */
export const createWebRouter = (
  web: WebOptions,
  ctx: { readonly basePath: string; readonly version: string; readonly auth: Authenticator },
): Router => {
  const router = Router();
  const boot: WebBootConfig = {
    basePath: ctx.basePath,
    apiBase: `${ctx.basePath}/api/v2`,
    authMode: web.authMode,
    oidc: web.oidc ?? false,
    passwordLogin: web.passwordLogin ?? web.authMode !== 'none',
    version: ctx.version,
  };
  const indexPath = join(web.root, 'index.html');
  let page: string | undefined;
  const indexHtml = (): string | undefined => {
    if (page === undefined && existsSync(indexPath))
      page = renderIndexHtml(readFileSync(indexPath, 'utf8'), boot);
    return page;
  };

  router.get('/auth/session', (req, res) => {
    res.setHeader('Cache-Control', 'no-store');
    res.json(describeSession(ctx.auth, req, web.authMode, web.viaCookie));
  });
  if (web.authRouter) router.use('/auth', web.authRouter);

  router.use('/assets', compressedAssets(join(web.root, 'assets')));
  router.use(
    '/assets',
    express.static(join(web.root, 'assets'), {
      index: false,
      immutable: true,
      maxAge: '365d',
      setHeaders: (res) => res.setHeader('Cache-Control', IMMUTABLE),
    }),
  );
  // A missing bundle is a plain 404, never index.html (a stale tab asking for an old build).
  router.use('/assets', (req, res) => {
    res.status(404).type('text/plain').send(`no such asset: ${req.path}`);
  });
  router.use(
    express.static(web.root, {
      index: false,
      setHeaders: (res) => res.setHeader('Cache-Control', 'no-cache'),
    }),
  );
  const sendIndex = (req: Request, res: Response): void => {
    const html = indexHtml();
    res.setHeader('Cache-Control', 'no-cache');
    if (html === undefined) {
      res
        .status(503)
        .type('text/plain')
        .send(
          `The web UI is not built (no ${indexPath}): run "pnpm build" in the Trellis checkout, ` +
            `or set server.headless: true to serve the API only.`,
        );
      return;
    }
    res.type('html').send(html);
  };
  router.get(/^\/(?!api\/|assets\/).*/, sendIndex);
  return router;
};
