// `node src/main.ts` equivalent of `outreach serve`, for process managers that run an entry file.
import module from 'node:module';

// Node 22.1+: V8's compiled code for every module is kept on disk (NODE_COMPILE_CACHE, else the system's temporary
// directory), so a restart skips most of the compiling (docs/package.md). Absent on Node 20: nothing happens.
(module as { enableCompileCache?: () => unknown }).enableCompileCache?.();
process.argv.splice(2, 0, 'serve');
await import('./cli/main.js');
