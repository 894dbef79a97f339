import fs from 'node:fs';
import path from 'node:path';

/**
 * Writes `dir`/tsconfig.json for a consumer project that type-checks `check.ts` against an installed package: strict
 * NodeNext ES2022 with the DOM library, no output; `compilerOptions` over those.
 */
export function writeConsumerTsconfig(dir: string, compilerOptions: Record<string, unknown>) {
  fs.writeFileSync(
    path.join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        strict: true,
        noEmit: true,
        lib: ['ES2022', 'DOM'],
        ...compilerOptions,
      },
      files: ['check.ts'],
    }),
  );
}
