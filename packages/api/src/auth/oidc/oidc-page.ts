import type { Response } from 'express';

/** A small HTML page telling the user what happened during sign-in, with a link back. */
export const page = (
  res: Response,
  status: number,
  title: string,
  text: string,
  link: string,
): void => {
  const esc = (s: string) =>
    s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
  res
    .status(status)
    .type('html')
    .setHeader('Cache-Control', 'no-store')
    .send(
      `<!doctype html><meta charset="utf-8"><title>${esc(title)}</title>` +
        `<body style="font-family:system-ui,sans-serif;max-width:40em;margin:4em auto">` +
        `<h1>${esc(title)}</h1><p>${esc(text)}</p><p><a href="${esc(link)}">Back to Trellis</a></p></body>`,
    );
};
