import type { AppInstance } from './types.js';

/** The console's accent colour (console.css `--accent`) and the icon's one shape: a white ring on a rounded square. */
const ACCENT = { r: 0x0b, g: 0x5c, b: 0xad };

/** The icon as SVG (32×32 view box), served at /favicon.svg; the console's pages link it. */
export const FAVICON_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="6" fill="#0b5cad"/>' +
  '<circle cx="16" cy="16" r="8.5" fill="none" stroke="#fff" stroke-width="4"/></svg>\n';

/** How long a browser may keep either icon without asking again: 30 days (the icon changes with a release at most). */
export const FAVICON_CACHE_CONTROL = 'public, max-age=2592000';

/**
 * The same icon as a Windows ICO file (what browsers ask `/favicon.ico` for when a page names no icon): one 16×16
 * image, 32 bits per pixel (BGRA, bottom row first) with an all-opaque AND mask, as the ICO format's BITMAPINFOHEADER
 * variant lays it out (header 6 bytes, one 16-byte directory entry, 40-byte header, 1024 bytes of pixels, 64 of mask).
 * Drawn from the SVG's geometry, so no binary file is kept in the repository. Returns 1134 bytes.
 */
export function faviconIco(): Buffer {
  const size = 16;
  const pixels = Buffer.alloc(size * size * 4);
  const scale = 32 / size;
  for (let row = 0; row < size; row++) {
    for (let col = 0; col < size; col++) {
      // The SVG's coordinates of this pixel's centre.
      const x = (col + 0.5) * scale;
      const y = (row + 0.5) * scale;
      const ring = Math.abs(Math.hypot(x - 16, y - 16) - 8.5) <= 2;
      // The rounded square's corners (radius 6) stay transparent.
      const cx = Math.min(Math.max(x, 6), 26);
      const cy = Math.min(Math.max(y, 6), 26);
      const inside = Math.hypot(x - cx, y - cy) <= 6;
      const at = ((size - 1 - row) * size + col) * 4; // rows are stored bottom up
      if (!inside) continue;
      const [r, g, b] = ring ? [255, 255, 255] : [ACCENT.r, ACCENT.g, ACCENT.b];
      pixels.writeUInt8(b, at);
      pixels.writeUInt8(g, at + 1);
      pixels.writeUInt8(r, at + 2);
      pixels.writeUInt8(255, at + 3);
    }
  }
  const mask = Buffer.alloc(size * 4); // 16 rows of 1 bit per pixel padded to 32 bits, all 0: the alpha channel decides
  const info = Buffer.alloc(40);
  info.writeUInt32LE(40, 0); // header size
  info.writeInt32LE(size, 4); // width
  info.writeInt32LE(size * 2, 8); // height: the XOR image and the AND mask
  info.writeUInt16LE(1, 12); // planes
  info.writeUInt16LE(32, 14); // bits per pixel
  info.writeUInt32LE(pixels.length + mask.length, 20); // image size
  const image = Buffer.concat([info, pixels, mask]);
  const header = Buffer.alloc(6 + 16);
  header.writeUInt16LE(0, 0); // reserved
  header.writeUInt16LE(1, 2); // type: icon
  header.writeUInt16LE(1, 4); // one image
  header.writeUInt8(size, 6); // width
  header.writeUInt8(size, 7); // height
  header.writeUInt8(0, 8); // no palette
  header.writeUInt16LE(1, 10); // planes
  header.writeUInt16LE(32, 12); // bits per pixel
  header.writeUInt32LE(image.length, 14); // bytes of the image
  header.writeUInt32LE(header.length, 18); // where it starts
  return Buffer.concat([header, image]);
}

/**
 * `GET /favicon.ico` (image/x-icon) and `GET /favicon.svg` (image/svg+xml): public, no key, cached 30 days, logged
 * only at `warn` (a browser asks for them with every first page view).
 */
export function registerFavicon(app: AppInstance): void {
  const ico = faviconIco();
  app.get('/favicon.ico', { schema: { hide: true }, logLevel: 'warn' }, async (_req, reply) =>
    reply.header('cache-control', FAVICON_CACHE_CONTROL).type('image/x-icon').send(ico),
  );
  app.get('/favicon.svg', { schema: { hide: true }, logLevel: 'warn' }, async (_req, reply) =>
    reply.header('cache-control', FAVICON_CACHE_CONTROL).header('x-content-type-options', 'nosniff').type('image/svg+xml').send(FAVICON_SVG),
  );
}
