import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { AppInstance } from '../app/types.js';

const require = createRequire(import.meta.url);
/** Next to this file: src/console/assets, or dist/console/assets (the build copies them; the package ships no src/). */
const OWN_ASSETS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'assets');

/** Vendored files served from node_modules (no CDN: the console works offline). */
const VENDOR: Record<string, string> = {
  'htmx.min.js': 'htmx.org/dist/htmx.min.js',
  'uPlot.iife.min.js': 'uplot/dist/uPlot.iife.min.js',
  'uPlot.min.css': 'uplot/dist/uPlot.min.css',
};

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};

/** Every servable file by its public name, read once at start: nothing outside this list can be asked for. */
function loadAssets(): Map<string, { body: Buffer; type: string }> {
  const assets = new Map<string, { body: Buffer; type: string }>();
  for (const [name, spec] of Object.entries(VENDOR)) {
    assets.set(name, { body: fs.readFileSync(require.resolve(spec)), type: TYPES[path.extname(name)] });
  }
  for (const name of fs.readdirSync(OWN_ASSETS_DIR)) {
    const type = TYPES[path.extname(name)];
    if (type) assets.set(name, { body: fs.readFileSync(path.join(OWN_ASSETS_DIR, name)), type });
  }
  return assets;
}

export const ASSET_PREFIX = '/console/assets/';

export function registerAssets(app: AppInstance) {
  const assets = loadAssets();
  app.get<{ Params: { name: string } }>('/console/assets/:name', { schema: { hide: true }, config: { consolePublic: true } }, async (req, reply) => {
    const asset = assets.get(req.params.name);
    if (!asset) return reply.status(404).type('text/plain; charset=utf-8').send('not found');
    return reply.header('cache-control', 'public, max-age=300').type(asset.type).send(asset.body);
  });
}
