// `node src/main.ts` equivalent of `outreach serve`, for process managers that run an entry file.
process.argv.splice(2, 0, 'serve');
await import('./cli/main.js');
